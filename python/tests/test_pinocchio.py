"""The Pinocchio plugin (build/plugins/pinocchio.so, built by make when the pin package is in
.venv/) from Python: pinocchio-aba and pinocchio-crba agree with dense to 1e-10 on the
robots, one state at a time and in a batch. tests/test_pinocchio.c checks every joint type."""

import os
from typing import List

import numpy as np
import pytest

import mbdbench
from conftest import ROOT, random_state

PLUGIN = os.path.join(ROOT, "build", "plugins", "pinocchio.so")
SOLVERS = ["pinocchio-aba", "pinocchio-crba"]


@pytest.fixture(scope="module")
def pinocchio() -> List[str]:
    if not os.path.exists(PLUGIN):
        pytest.skip(f"{PLUGIN} not built (no pin package in .venv/)")
    if SOLVERS[0] not in mbdbench.solvers():
        assert mbdbench.load_plugin(PLUGIN) == SOLVERS
    return SOLVERS


@pytest.mark.parametrize("path, floating", [("models/arm7.urdf", False),
                                            ("models/quadruped.urdf", True)])
def test_pinocchio_matches_dense(pinocchio: List[str], path: str, floating: bool) -> None:
    model = mbdbench.Model(os.path.join(ROOT, path), floating_base=floating)
    q, qd, tau = random_state(model, 5)
    expected = model.forward(q, qd, tau, solver="dense")
    scale = np.linalg.norm(expected)
    Q, QD, TAU = (np.array([x] * 4) for x in (q, qd, tau))
    for solver in pinocchio:
        got = model.forward(q, qd, tau, solver=solver)
        assert np.linalg.norm(got - expected) <= 1e-10 * scale, solver
        batch = model.forward_batch(Q, QD, TAU, solver=solver, threads=2)
        assert np.array_equal(batch, np.array([got] * 4))
