"""Bad input raises a clear exception, never a crash; no reference leaks over 1e5 calls."""

import os
import sys
from typing import Callable, List, Tuple

import numpy as np
import pytest

import mbdbench
from conftest import ROOT


def test_wrong_shapes_name_the_argument_and_shape(chain: mbdbench.Model) -> None:
    q = np.zeros(10)
    with pytest.raises(ValueError, match=r"qd: expected shape \(nv,\) = \(10,\), got \(9,\)"):
        chain.forward(q, np.zeros(9))
    with pytest.raises(ValueError, match=r"q: expected shape \(nq,\) = \(10,\), got \(2, 5\)"):
        chain.forward(np.zeros((2, 5)), q)
    with pytest.raises(ValueError, match=r"q: expected shape"):
        chain.mass_matrix(3.0)


def test_wrong_types_are_type_errors(chain: mbdbench.Model) -> None:
    q = np.zeros(10)
    with pytest.raises(TypeError, match="q: expected a float64 array"):
        chain.forward(None, q)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tau: expected a float64 array"):
        chain.forward(q, q, np.zeros(10, dtype=complex))
    with pytest.raises(TypeError, match="qd: expected a float64 array"):
        chain.forward(q, ["a"] * 10)
    with pytest.raises(TypeError, match="qd: expected a float64 array"):
        chain.forward(q, object())  # type: ignore[arg-type]


def test_other_dtypes_and_layouts_are_converted(chain: mbdbench.Model) -> None:
    q, qd = np.linspace(-1, 1, 10), np.linspace(1, 2, 10)
    expected = chain.forward(q, qd)
    single = q.astype(np.float32)
    assert np.array_equal(chain.forward(single, qd), chain.forward(single.astype(np.float64), qd))
    assert np.array_equal(chain.forward(list(q), tuple(qd)), expected)
    wide = np.zeros(20)
    wide[::2] = q
    assert np.array_equal(chain.forward(wide[::2], qd), expected)
    assert np.array_equal(chain.forward(q.astype(">f8"), qd), expected)
    ints = np.arange(10)
    assert np.array_equal(chain.forward(ints, ints), chain.forward(ints.astype(float), ints.astype(float)))


def test_nan_and_inf_are_library_errors(chain: mbdbench.Model) -> None:
    q = np.zeros(10)
    bad = q.copy()
    bad[4] = np.nan
    for call in (lambda: chain.forward(bad, q), lambda: chain.forward(q, q, np.full(10, np.inf)),
                 lambda: chain.inverse_dynamics(q, bad, q)):
        with pytest.raises(mbdbench.Error) as caught:
            call()
        assert "NaN" in str(caught.value)


def test_singular_inertia_names_the_body() -> None:
    model = mbdbench.Model(os.path.join(ROOT, "fuzz", "corpus", "fuzz_model_json", "massless-leaf.json"))
    zero = np.zeros(model.nv)
    with pytest.raises(mbdbench.Error) as caught:
        model.forward(model.neutral(), zero)
    assert str(caught.value) == ('forward: singular joint-space inertia at the prismatic joint '
                                 'of body 1 ("frame")')
    assert caught.value.status == -6
    qdd, status = model.forward_batch([model.neutral()], [zero], return_status=True)
    assert status[0] == -6 and np.isnan(qdd).all()


def test_zero_quaternion_is_refused() -> None:
    model = mbdbench.Model("chain:n=2,joint=spherical")
    with pytest.raises(mbdbench.Error):
        model.forward(np.zeros(8), np.zeros(6))


def test_argument_errors(chain: mbdbench.Model) -> None:
    q = np.zeros(10)
    with pytest.raises(TypeError, match="missing required argument 'qd'"):
        chain.forward(q)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'torque'"):
        chain.forward(q, q, torque=q)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for argument 'q'"):
        chain.forward(q, q, q=q)  # type: ignore[misc]
    with pytest.raises(TypeError, match="at most"):
        chain.forward(q, q, q, "dense", 1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown solver 'fastest'"):
        chain.forward(q, q, solver="fastest")
    with pytest.raises(ValueError, match="unknown solver"):
        chain.forward(q, q, solver=3)  # type: ignore[arg-type]
    with pytest.raises(mbdbench.Error, match="not supported"):
        chain.forward_momentum(q, q, solver="bodies")  # bodies has the acceleration form only
    with pytest.raises(TypeError, match="baumgarte"):
        chain.forward_constrained(q, q, baumgarte=1.0)  # type: ignore[arg-type]


def test_foreign_objects_refused() -> None:
    with pytest.raises(TypeError, match="model"):
        mbdbench.recommend("chain:n=3,joint=revolute")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mbdbench.Model.forward(object(), np.zeros(3), np.zeros(3))  # type: ignore[arg-type]


def test_no_reference_leak_over_1e5_calls(chain: mbdbench.Model) -> None:
    q, qd, tau = np.full(10, 0.1), np.full(10, -0.3), np.full(10, 0.2)
    Q, QD = np.tile(q, (4, 1)), np.tile(qd, (4, 1))
    bad = np.zeros(9)
    watched = (q, qd, tau, Q, QD, bad, chain)

    def calls(n: int) -> None:
        for _ in range(n):
            chain.forward(q, qd, tau)
            chain.inverse_dynamics(q, qd, tau)
            chain.forward_batch(Q, QD, threads=1)
            try:
                chain.forward(q, bad)
            except ValueError:
                pass

    calls(1000)  # warm: the workspaces and batches the pool keeps
    before = [sys.getrefcount(x) for x in watched], sys.getallocatedblocks()
    calls(100_000 // 4)
    after = [sys.getrefcount(x) for x in watched], sys.getallocatedblocks()
    assert after[0] == before[0]
    assert abs(after[1] - before[1]) < 100


@pytest.mark.parametrize("call, argument", [
    (lambda: mbdbench.Model("chain:n=3,joint=revolute\0x"), "path_or_spec"),
    (lambda: mbdbench.Model("chain:n=3,joint=revolute").forward(np.zeros(3), np.zeros(3),
                                                                   solver="dense\0x"), "solver"),
    (lambda: mbdbench.Model("chain:n=3,joint=revolute").forward_derivatives(
        np.zeros(3), np.zeros(3), method="analytic\0x"), "method"),
    (lambda: mbdbench.Model("chain:n=3,joint=revolute")._simulate(
        np.zeros(3), np.zeros(3), "rk4\0x", None, 1.0, 0.1, 0.0, 0.0, 0.0, "dense", (0.0, 0.0)),
     "integrator"),
])
def test_nul_characters_are_refused(call: Callable[[], object], argument: str) -> None:
    """C would read a str only up to its NUL: 'dense\\0x' ran dense."""
    with pytest.raises(ValueError, match=f"{argument}: contains a NUL character"):
        call()


def test_nan_names_the_argument(chain: mbdbench.Model) -> None:
    q = np.zeros(10)
    bad = q.copy()
    bad[4] = np.nan
    cases: List[Tuple[Callable[[], object], str]] = [
        (lambda: chain.forward(q, bad), "qd: element 4 is nan"),
        (lambda: chain.forward(q, q, np.full(10, np.inf)), "tau: element 0 is inf"),
        (lambda: chain.forward(bad, q), "q: element 4 is nan")]
    for call, name in cases:
        with pytest.raises(mbdbench.Error, match=name) as caught:
            call()
        assert caught.value.status == -5


def test_model_is_final() -> None:
    """The C type loads the model in __new__: a subclass's own __init__ could not work."""
    with pytest.raises(TypeError, match="cannot be subclassed"):
        class Mine(mbdbench.Model):
            def __init__(self, spec: str) -> None:
                super().__init__(spec)  # type: ignore[call-arg]


def test_huge_broadcast_view_names_its_shape(chain: mbdbench.Model) -> None:
    """A zero-stride view of 10^12 rows takes no memory until it is copied."""
    huge = np.broadcast_to(np.zeros(10), (10**12, 10))
    with pytest.raises(ValueError, match=r"Q: shape \(1000000000000, 10\) is too large"):
        chain.forward_batch(huge, huge)

