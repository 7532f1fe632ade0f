"""Every single-state function against the mbd command and the C tests' closed forms."""

import json
import os
import tempfile
from typing import Any, Dict, List, Sequence

import numpy as np
import pytest

import mbdbench
from conftest import LIBRARY_SOLVERS, cli_list, mbd_json, model_path, random_state

G0 = 9.81


def acceleration_solvers(model: mbdbench.Model) -> List[str]:
    out = []
    for name in LIBRARY_SOLVERS:
        try:
            model.forward(model.neutral(), np.zeros(model.nv), solver=name)
            out.append(name)
        except mbdbench.Error:
            pass
    return out


def test_forward_matches_fd_for_every_solver(any_model: mbdbench.Model) -> None:
    q, qd, tau = random_state(any_model, 1)
    for solver in acceleration_solvers(any_model):
        expected = mbd_json("fd", any_model.spec, "--solver", solver, "--q", cli_list(q),
                            "--qd", cli_list(qd), "--tau", cli_list(tau))["qdd"]
        got = any_model.forward(q, qd, tau, solver=solver)
        assert np.allclose(got, expected, rtol=1e-12, atol=1e-12), solver


def test_forward_default_solver_is_dense_and_tau_defaults_to_zero(chain: mbdbench.Model) -> None:
    q, qd, _ = random_state(chain, 2)
    assert np.array_equal(chain.forward(q, qd), chain.forward(q, qd, np.zeros(10), "dense"))


def test_forward_momentum_matches_fd() -> None:
    model = mbdbench.Model("chain:n=6,joint=cardan")
    q, qd, tau = random_state(model, 3)
    p = model.momentum(q, qd)
    for solver in ("poisson-ldlt", "poisson-sweep"):
        expected = mbd_json("fd", model.spec, "--solver", solver, "--q", cli_list(q),
                            "--p", cli_list(p), "--tau", cli_list(tau))
        got_qd, got_pd = model.forward_momentum(q, p, tau, solver=solver)
        assert np.allclose(got_qd, expected["qd"], rtol=1e-12, atol=1e-12)
        assert np.allclose(got_pd, expected["pd"], rtol=1e-12, atol=1e-12)
        assert np.allclose(got_qd, qd, rtol=1e-10, atol=1e-10)


def test_inverse_dynamics_matches_id_and_inverts_forward(any_model: mbdbench.Model) -> None:
    q, qd, tau = random_state(any_model, 4)
    qdd = any_model.forward(q, qd, tau)
    expected = mbd_json("id", any_model.spec, "--q", cli_list(q), "--qd", cli_list(qd),
                        "--qdd", cli_list(qdd))
    got_tau, reactions = any_model.inverse_dynamics(q, qd, qdd)
    assert reactions.shape == (any_model.nbodies, 6)
    assert np.allclose(got_tau, expected["tau"], rtol=1e-12, atol=1e-12)
    assert np.allclose(reactions, expected["reactions"], rtol=1e-12, atol=1e-12)
    assert np.allclose(got_tau, tau, rtol=1e-9, atol=1e-9)


def test_mass_matrix_and_inverse_match_minv(any_model: mbdbench.Model) -> None:
    q, _, _ = random_state(any_model, 5)
    H = any_model.mass_matrix(q)
    Hinv = any_model.mass_matrix_inverse(q)
    expected = mbd_json("minv", any_model.spec, "--q", cli_list(q))["Hinv"]
    assert np.allclose(Hinv, expected, rtol=1e-12, atol=1e-12)
    assert np.allclose(H @ Hinv, np.eye(any_model.nv), atol=1e-9)
    assert np.array_equal(H, H.T)


def test_coefficients_match_coeffs() -> None:
    model = mbdbench.Model(model_path("cardan-chain.json"))
    q, qd, _ = random_state(model, 6)
    got = model.coefficients(q, qd)
    expected = mbd_json("coeffs", model.spec, "--q", cli_list(q), "--qd", cli_list(qd), "--json")
    for key in ("H", "C", "g", "Cqd"):
        assert np.allclose(got[key], expected[key], rtol=1e-12, atol=1e-12), key
    assert np.allclose(got["H"], model.mass_matrix(q), rtol=1e-13, atol=1e-13)
    tau_id, _ = model.inverse_dynamics(q, qd, np.zeros(model.nv))
    assert np.allclose(got["Cqd"] + got["g"], tau_id, atol=1e-10)


def test_momentum_and_energy(any_model: mbdbench.Model) -> None:
    q, qd, _ = random_state(any_model, 7)
    H = any_model.mass_matrix(q)
    assert np.allclose(any_model.momentum(q, qd), H @ qd, rtol=1e-12, atol=1e-12)
    kinetic, potential = any_model.energy(q, qd)
    assert kinetic == pytest.approx(0.5 * qd @ H @ qd, rel=1e-12)
    assert isinstance(potential, float)


def test_forward_constrained_matches_fd_on_loops() -> None:
    model = mbdbench.Model(model_path("four-bar.json"))
    assert model.nloops == 1
    q, qd = model.project_constraints(model.neutral() + 0.1, np.full(model.nv, 0.2))
    phi, phid = model.constraint_violation(q, qd)
    assert np.linalg.norm(phi) < 1e-10 and np.linalg.norm(phid) < 1e-10
    tau = np.linspace(-1, 1, model.nv)
    for solver in ("dense", "bodies"):
        expected = mbd_json("fd", model.spec, "--solver", solver, "--q", cli_list(q), "--qd",
                            cli_list(qd), "--tau", cli_list(tau))
        qdd, lam = model.forward_constrained(q, qd, tau, solver=solver)
        assert lam.shape == (model.nconstraints,)
        assert np.allclose(qdd, expected["qdd"], rtol=1e-10, atol=1e-10)
        assert np.allclose(lam, expected["lambda"], rtol=1e-10, atol=1e-10)
    with pytest.raises(mbdbench.Error):
        model.forward_constrained(q, qd, tau, solver="poisson-sweep")


def planar_links(lengths: Sequence[float], masses: Sequence[float], lcs: Sequence[float],
                 izz: Sequence[float]) -> mbdbench.Model:
    """The C tests' planar links (tests/test_dynamics.c) as a JSON model file."""
    bodies = []
    for k, (m, lc, i) in enumerate(zip(masses, lcs, izz)):
        bodies.append({
            "name": f"link{k}", "parent": f"link{k - 1}" if k else "world",
            "joint": {"type": "revolute", "axis": [0, 0, 1],
                      "origin": [lengths[k - 1] if k else 0.0, 0, 0]},
            "mass": m, "com": [lc, 0, 0],
            "inertia": [[1e-3 * i, 0, 0], [0, i, 0], [0, 0, i]]})
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"name": "planar", "gravity": [0, -G0, 0], "bodies": bodies}, f)
    try:
        return mbdbench.Model(path)
    finally:
        os.unlink(path)


def test_single_pendulum_closed_form() -> None:
    length, m, lc, izz = 1.2, 2.5, 0.7, 0.04
    model = planar_links([length], [m], [lc], [izz])
    q, qd, tau = 0.4, -1.3, 0.8
    expected = (tau - m * G0 * lc * np.cos(q)) / (izz + m * lc * lc)
    for solver in acceleration_solvers(model):
        assert model.forward([q], [qd], [tau], solver=solver)[0] == pytest.approx(expected, rel=1e-14)
    assert model.inverse_dynamics([q], [qd], [expected])[0][0] == pytest.approx(tau, rel=1e-14)


def test_double_pendulum_closed_form() -> None:
    L, m, lc, I = [1.0, 0.8], [1.5, 0.9], [0.45, 0.35], [0.05, 0.03]
    model = planar_links(L, m, lc, I)
    q, qd, qdd = np.array([0.3, -0.7]), np.array([1.1, -0.4]), np.array([0.5, 2.0])
    c2, s2, h = np.cos(q[1]), np.sin(q[1]), m[1] * L[0] * lc[1]
    H11 = I[0] + I[1] + m[0] * lc[0] ** 2 + m[1] * (L[0] ** 2 + lc[1] ** 2 + 2 * L[0] * lc[1] * c2)
    H12 = I[1] + m[1] * (lc[1] ** 2 + L[0] * lc[1] * c2)
    H = np.array([[H11, H12], [H12, I[1] + m[1] * lc[1] ** 2]])
    C = np.array([-h * s2 * (2 * qd[0] * qd[1] + qd[1] ** 2), h * s2 * qd[0] ** 2])
    G = np.array([(m[0] * lc[0] + m[1] * L[0]) * G0 * np.cos(q[0]) + m[1] * lc[1] * G0 * np.cos(q.sum()),
                  m[1] * lc[1] * G0 * np.cos(q.sum())])
    tau = H @ qdd + C + G
    assert np.allclose(model.inverse_dynamics(q, qd, qdd)[0], tau, rtol=1e-14, atol=1e-14)
    assert np.allclose(model.mass_matrix(q), H, rtol=1e-14, atol=1e-14)
    assert np.allclose(model.forward(q, qd, tau), qdd, rtol=1e-12)
    coeffs = model.coefficients(q, qd)
    assert np.allclose(coeffs["Cqd"], C, rtol=1e-13) and np.allclose(coeffs["g"], G, rtol=1e-13)
