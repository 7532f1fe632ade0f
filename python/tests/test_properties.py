"""Property tests of the package's boundary (hypothesis): arrays of any shape, dtype, layout
and value, and any arguments beside them, never crash the interpreter. A call answers (new
arrays of the documented shapes, all finite) or raises what docs/python.md documents:
TypeError for what cannot be a float64 array, ValueError naming the argument for a wrong
shape, mbdbench.Error (a ValueError) for what the library refuses (NaN, inf, overflow)."""

from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mbdbench

# Derandomized, so that a failure reproduces; the C fuzzers (fuzz/) explore at length.
PROPERTIES = settings(max_examples=150, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow])

DTYPES = st.sampled_from(["f8", ">f8", "f4", "f2", "i1", "i8", "u8", "?", "c16", "U4", "O"])
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=12)
# Floats of every kind: NaN, infinities, subnormals and the largest finite ones.
VALUES = st.floats(allow_nan=True, allow_infinity=True, width=64)


def layouts(array: npt.NDArray[Any]) -> Iterator[npt.NDArray[Any]]:
    """The array as it is, Fortran-ordered, strided (every other element of a larger one),
    and misaligned (one byte into a buffer): each a path of its own through the conversion."""
    yield array
    if array.dtype.kind in "fiub?c":
        yield np.asfortranarray(array)
        wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],) if array.ndim else (2,),
                        dtype=array.dtype)
        if array.ndim:
            wide[..., ::2] = array
            yield wide[..., ::2]
        raw = np.zeros(array.nbytes + 1, dtype=np.uint8)
        misaligned = raw[1:].view(array.dtype).reshape(array.shape)
        misaligned[...] = array
        yield misaligned


@st.composite
def arrays(draw: st.DrawFn, length: int) -> npt.NDArray[Any]:
    """An array meant for a vector of `length`: mostly that shape, any dtype and values."""
    dtype = np.dtype(draw(DTYPES))
    shape = draw(st.one_of(st.just((length,)), SHAPES))
    if dtype.kind == "f":
        return draw(hnp.arrays(dtype, shape, elements=VALUES.map(dtype.type)
                               if dtype.itemsize == 8 else None))
    if dtype.kind in "OU":
        values = draw(st.lists(st.one_of(VALUES, st.text(max_size=3)), min_size=1, max_size=1))
        return np.full(shape, values[0], dtype=dtype)
    return draw(hnp.arrays(dtype, shape))


def expect(call: Callable[[npt.NDArray[Any]], Any], array: npt.NDArray[Any], length: int,
           out_shapes: List[Tuple[int, ...]]) -> None:
    """Calls with `array` in one argument's place; checks the outcome against the array."""
    convertible = np.can_cast(array.dtype, np.float64, "safe")
    try:
        out = call(array)
    except mbdbench.Error as e:
        assert convertible and array.shape == (length,), f"{e} for {array.dtype} {array.shape}"
        assert str(e) and "\n" not in str(e)
        return
    except ValueError as e:
        assert convertible and array.shape != (length,), f"{e} for {array.dtype} {array.shape}"
        assert "expected shape" in str(e)
        return
    except TypeError as e:
        assert "expected a float64 array" in str(e), str(e)
        return
    assert convertible and array.shape == (length,)
    assert np.isfinite(array.astype(np.float64)).all(), "non-finite input answered"
    outs = out if isinstance(out, tuple) else (out,)
    for result, shape in zip(outs, out_shapes):
        result = np.asarray(result)
        assert result.shape == shape and np.isfinite(result).all()


@pytest.fixture(scope="module")
def model() -> mbdbench.Model:
    """Free joints: quaternions in q, so that nq (14) and nv (12) differ."""
    return mbdbench.Model("chain:n=2,joint=free")


# The argument replaced, the call with (model, x, q, v), the output shapes of (nq, nv).
Call = Tuple[str, Callable[..., Any], Callable[[int, int], List[Tuple[int, ...]]]]
CALLS: Dict[str, Call] = {
    "forward q": ("q", lambda m, x, q, v: m.forward(x, v, v), lambda nq, nv: [(nv,)]),
    "forward qd": ("v", lambda m, x, q, v: m.forward(q, x, v, solver="bodies"),
                   lambda nq, nv: [(nv,)]),
    "forward tau": ("v", lambda m, x, q, v: m.forward(q, v, x, solver="sparse"),
                    lambda nq, nv: [(nv,)]),
    "forward_momentum p": ("v", lambda m, x, q, v: m.forward_momentum(q, x, v, "poisson-ldlt"),
                           lambda nq, nv: [(nv,), (nv,)]),
    "inverse_dynamics qdd": ("v", lambda m, x, q, v: m.inverse_dynamics(q, v, x),
                             lambda nq, nv: [(nv,)]),
    "mass_matrix q": ("q", lambda m, x, q, v: m.mass_matrix(x), lambda nq, nv: [(nv, nv)]),
    "mass_matrix_inverse q": ("q", lambda m, x, q, v: m.mass_matrix_inverse(x),
                              lambda nq, nv: [(nv, nv)]),
    "momentum qd": ("v", lambda m, x, q, v: m.momentum(q, x), lambda nq, nv: [(nv,)]),
    "energy q": ("q", lambda m, x, q, v: m.energy(x, v), lambda nq, nv: [(), ()]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_any_array_answers_or_raises_the_documented_exception(model: mbdbench.Model,
                                                              name: str) -> None:
    which, call, shapes = CALLS[name]
    length = model.nq if which == "q" else model.nv
    q, v = model.neutral(), np.full(model.nv, 0.5)

    @PROPERTIES
    @given(array=arrays(length))
    def check(array: npt.NDArray[Any]) -> None:
        for layout in layouts(array):
            expect(lambda x: call(model, x, q, v), layout, length, shapes(model.nq, model.nv))

    check()


@PROPERTIES
@given(K=st.integers(0, 19), threads=st.integers(1, 3), simd=st.booleans(),
       solver=st.sampled_from(["dense", "bodies", "poisson-ldlt", "sparse"]), data=st.data())
def test_batch_rows_fail_alone(model: mbdbench.Model, K: int, threads: int, simd: bool, solver: str,
                              data: st.DataObject) -> None:
    """forward_batch over K states, some rows with NaN, inf or huge numbers: each row's
    status is its own, failed rows are NaN, the others finite."""
    rows = hnp.arrays(np.float64, (K, model.nv), elements=VALUES)
    QD = data.draw(rows)
    Q = np.tile(model.neutral(), (K, 1))
    qdd, status = model.forward_batch(Q, QD, QD, solver=solver, threads=threads, simd=simd,
                                      return_status=True)
    assert qdd.shape == (K, model.nv) and status.shape == (K,)
    for k in range(K):
        if not np.isfinite(QD[k]).all():
            assert status[k] != 0
        if status[k] == 0:
            assert np.isfinite(qdd[k]).all()
        else:
            assert np.isnan(qdd[k]).all()


@PROPERTIES
@given(shape=st.sampled_from([(2**40, 14), (14, 2**40), (2**50, 0), (2**36, 2**20)]))
def test_huge_arrays_are_refused(model: mbdbench.Model, shape: Tuple[int, int]) -> None:
    """Views far larger than any memory (zero strides: petabytes, or none at all for 2**50
    empty rows): refused with the documented exception, not a crash."""
    huge = np.lib.stride_tricks.as_strided(np.zeros(1), shape=shape, strides=(0, 0))
    with pytest.raises((TypeError, ValueError)):
        model.forward_batch(huge, huge)


@PROPERTIES
@given(solver=st.one_of(st.text(max_size=12), st.integers(), st.none(), st.floats()),
       threads=st.one_of(st.integers(-2**70, 2**70), st.floats(), st.text(max_size=3)),
       tol=st.one_of(VALUES, st.integers(-10, 10), st.text(max_size=3)))
def test_any_option_answers_or_raises(model: mbdbench.Model, solver: Any, threads: Any,
                                      tol: Any) -> None:
    """Solver names, thread counts and tolerances of any type and value."""
    q, v = model.neutral(), np.zeros(model.nv)
    for call in (lambda: model.forward(q, v, v, solver=solver),
                 lambda: model.forward_batch(q[None], v[None], solver="bodies", threads=threads),
                 lambda: model.project_constraints(q, v, tol=tol)):
        try:
            call()
        except (TypeError, ValueError) as e:
            assert str(e) and "\n" not in str(e)


@PROPERTIES
@given(text=st.text(alphabet=st.characters(blacklist_characters="/\\0123456789"), max_size=40))
def test_any_model_text_loads_or_raises(text: str) -> None:
    """Specs and file names without digits (no model too large to build) or slashes (no
    files elsewhere): a model or mbdbench.Error, ValueError for a NUL."""
    try:
        model = mbdbench.Model(text)
    except ValueError as e:
        assert str(e)
        return
    assert model.nv >= 1
