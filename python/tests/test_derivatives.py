"""Model.forward_derivatives against closed forms, H^-1, central differences of forward and
the mbd command, for every method of the table."""

import json
import pathlib

import numpy as np
import pytest

import mbdbench
from conftest import LIBRARY_METHODS, cli_list, mbd_json, model_path, random_state

# A pendulum about z under gravity -y, its centre of mass LC from the axis:
# J qdd = tau - M G LC cos q.
M, LC, IZZ, G = 2.5, 0.7, 0.04, 9.81
J = IZZ + M * LC * LC
PENDULUM = {"name": "pendulum", "gravity": [0, -G, 0], "bodies": [{
    "name": "link", "parent": "world", "joint": {"type": "revolute", "axis": [0, 0, 1]},
    "mass": M, "com": [LC, 0, 0], "inertia": [[4e-5, 0, 0], [0, IZZ, 0], [0, 0, IZZ]]}]}


def tolerance(method: str) -> float:
    """Central differences to about eps^(2/3) relative, the others to round-off."""
    return 1e-7 if method == "finite-difference" else 1e-10


def test_methods_are_listed_and_the_first_is_the_default(chain: mbdbench.Model) -> None:
    methods = mbdbench.derivative_methods()
    assert methods and all(isinstance(m, str) for m in methods)
    q, qd, tau = random_state(chain, 3)
    default = chain.forward_derivatives(q, qd, tau)
    first = chain.forward_derivatives(q, qd, tau, method=methods[0])
    for a, b in zip(default, first):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("method", LIBRARY_METHODS)
def test_single_pendulum_in_closed_form(tmp_path: pathlib.Path, method: str) -> None:
    path = tmp_path / "pendulum.json"
    path.write_text(json.dumps(PENDULUM))
    model = mbdbench.Model(str(path))
    q = 0.4
    dq, dqd, dtau = model.forward_derivatives([q], [-1.3], [0.8], method=method)
    assert dq.shape == dqd.shape == dtau.shape == (1, 1)
    expected = [M * G * LC * np.sin(q) / J, 0.0, 1.0 / J]
    got = [dq[0, 0], dqd[0, 0], dtau[0, 0]]
    assert np.allclose(got, expected, rtol=tolerance(method), atol=tolerance(method))


@pytest.mark.parametrize("method", LIBRARY_METHODS)
def test_against_inverse_mass_matrix_and_central_differences(any_model: mbdbench.Model, method: str) -> None:
    if any_model.nloops:
        pytest.skip("loops: no derivatives")
    q, qd, tau = random_state(any_model, 4)
    dq, dqd, dtau = any_model.forward_derivatives(q, qd, tau, method=method)
    nv = any_model.nv
    assert dq.shape == dqd.shape == dtau.shape == (nv, nv)
    hinv = any_model.mass_matrix_inverse(q)
    tol = tolerance(method)
    assert np.allclose(dtau, hinv, rtol=tol, atol=tol * np.abs(hinv).max())
    # qd and tau enter linearly and quadratically: differences of forward are exact enough
    h = 1e-6
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = h
        column = (any_model.forward(q, qd + e, tau, solver="bodies")
                  - any_model.forward(q, qd - e, tau, solver="bodies")) / (2 * h)
        scale = max(1.0, np.abs(column).max())
        assert np.allclose(dqd[:, j], column, rtol=1e-5, atol=1e-5 * scale), (method, j)


def test_agrees_with_the_command(chain: mbdbench.Model) -> None:
    q, qd, tau = random_state(chain, 5)
    printed = mbd_json("derivatives", chain.spec, "--q", cli_list(q), "--qd", cli_list(qd),
                       "--tau", cli_list(tau), "--json")
    got = chain.forward_derivatives(q, qd, tau)
    assert printed["method"] == mbdbench.derivative_methods()[0]
    for key, matrix in zip(("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), got):
        assert np.allclose(matrix, printed[key], rtol=1e-12, atol=1e-12), key


def test_refusals(chain: mbdbench.Model) -> None:
    q, qd, tau = random_state(chain, 6)
    with pytest.raises(mbdbench.Error, match="method.*magic"):
        chain.forward_derivatives(q, qd, tau, method="magic")
    with pytest.raises(mbdbench.Error, match="solver.*magic"):
        chain.forward_derivatives(q, qd, tau, solver="magic")
    with pytest.raises(ValueError, match="qd"):
        chain.forward_derivatives(q, qd[:-1], tau)
    friction = mbdbench.Model("chain:n=3,joint=revolute,friction=0.2")
    with pytest.raises(mbdbench.Error, match="forward_derivatives"):
        friction.forward_derivatives(friction.neutral(), np.zeros(3))
    loops = mbdbench.Model(model_path("four-bar.json"))
    with pytest.raises(mbdbench.Error):
        loops.forward_derivatives(loops.neutral(), np.zeros(loops.nv))


def test_recommend_ranks_the_methods(chain: mbdbench.Model) -> None:
    ranking = mbdbench.recommend(chain, derivatives=True)
    assert sorted(row["variant"] for row in ranking) == sorted(LIBRARY_METHODS)
    assert ranking[0]["ratio_to_fastest"] == 1.0
