"""forward_batch: one-state answers to 1e-12, bad states isolated, Python threads side by side."""

import threading
from typing import Tuple

import numpy as np
import pytest

import mbdbench
from conftest import Vector, random_state


def states(model: mbdbench.Model, K: int, seed: int = 0) -> Tuple[Vector, ...]:
    rows = [random_state(model, seed + k) for k in range(K)]
    return tuple(np.array(column) for column in zip(*rows))


@pytest.mark.parametrize("spec", ["chain:n=10,joint=revolute", "chain:n=4,joint=free", "tree:n=9,branching=2"])
@pytest.mark.parametrize("solver", ["dense", "bodies", "sparse"])
@pytest.mark.parametrize("simd", [True, False])
def test_batch_equals_one_state_calls(spec: str, solver: str, simd: bool) -> None:
    model = mbdbench.Model(spec)
    Q, QD, TAU = states(model, 37)
    expected = np.array([model.forward(q, qd, tau, solver=solver) for q, qd, tau in zip(Q, QD, TAU)])
    for threads in (1, 2, None):
        got = model.forward_batch(Q, QD, TAU, solver=solver, threads=threads, simd=simd)
        assert got.shape == (37, model.nv)
        assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_batch_without_tau_and_empty_batch(chain: mbdbench.Model) -> None:
    Q, QD, _ = states(chain, 5)
    assert np.array_equal(chain.forward_batch(Q, QD), chain.forward_batch(Q, QD, np.zeros((5, 10))))
    empty = chain.forward_batch(np.zeros((0, 10)), np.zeros((0, 10)))
    assert empty.shape == (0, 10)


def test_a_bad_state_gets_nan_and_its_status(chain: mbdbench.Model) -> None:
    Q, QD, TAU = states(chain, 16)
    Q[3, 2] = np.nan
    QD[11, 0] = np.inf
    qdd, status = chain.forward_batch(Q, QD, TAU, solver="bodies", return_status=True)
    assert status.shape == (16,) and status.dtype.kind == "i"
    bad = [3, 11]
    assert all(status[k] != 0 for k in bad) and all(np.isnan(qdd[k]).all() for k in bad)
    good = [k for k in range(16) if k not in bad]
    assert (status[good] == 0).all()
    expected = np.array([chain.forward(Q[k], QD[k], TAU[k], solver="bodies") for k in good])
    assert np.allclose(qdd[good], expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(mbdbench.Error, match="state 3"):
        chain.forward_batch(Q, QD, TAU)


def test_batch_arguments_checked(chain: mbdbench.Model) -> None:
    Q, QD, TAU = states(chain, 4)
    with pytest.raises(ValueError, match=r"QD: expected shape \(K, nv\) = \(4, 10\)"):
        chain.forward_batch(Q, QD[:3])
    with pytest.raises(ValueError, match=r"Q: expected shape \(K, nq\)"):
        chain.forward_batch(Q[0], QD)
    with pytest.raises(ValueError, match="threads"):
        chain.forward_batch(Q, QD, threads=0)
    with pytest.raises(TypeError, match="threads"):
        chain.forward_batch(Q, QD, threads=1.5)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="solver"):
        chain.forward_batch(Q, QD, solver="fastest")


def test_batch_takes_any_layout(chain: mbdbench.Model) -> None:
    Q, QD, TAU = states(chain, 6)
    expected = chain.forward_batch(Q, QD, TAU)
    fortran = np.asfortranarray(Q)
    strided = np.zeros((6, 20))
    strided[:, ::2] = QD
    got = chain.forward_batch(fortran, strided[:, ::2], TAU.astype(">f8"))
    assert np.array_equal(got, expected)
    assert np.array_equal(chain.forward_batch(Q.tolist(), QD.tolist(), TAU.tolist()), expected)


def test_python_threads_share_a_model() -> None:
    model = mbdbench.Model("chain:n=40,joint=revolute")  # big enough that single calls release the GIL too
    Q, QD, TAU = states(model, 64)
    expected_batch = model.forward_batch(Q, QD, TAU, threads=1)
    expected_one = [model.forward(Q[k], QD[k], TAU[k], solver="bodies") for k in range(64)]
    failures = []

    def work(seed: int) -> None:
        for _ in range(20):
            if not np.array_equal(model.forward_batch(Q, QD, TAU, threads=1), expected_batch):
                failures.append(("batch", seed))
            k = seed % 64
            if not np.array_equal(model.forward(Q[k], QD[k], TAU[k], solver="bodies"),
                                  expected_one[k]):
                failures.append(("forward", seed))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
