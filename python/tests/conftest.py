"""Shared fixtures: the mbd command (the answers the package must agree with) and models."""

import json
import os
import subprocess
from typing import Any, Iterable, Tuple

import numpy as np
import numpy.typing as npt
import pytest

import mbdbench

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
MBD = os.path.abspath(os.environ.get("MBD", os.path.join(ROOT, "mbd")))
# The library's own solvers and derivatives methods, listed before any test loads a plugin:
# a plugin stays loaded for the rest of the session, and the mbd command that tests compare
# with does not load it, so that whatever ran before, these tests see the same lists.
LIBRARY_SOLVERS = tuple(mbdbench.solvers())
LIBRARY_METHODS = tuple(mbdbench.derivative_methods())
Vector = npt.NDArray[np.float64]


def model_path(name: str) -> str:
    return os.path.join(ROOT, "models", name)


def run_mbd(*args: object) -> str:
    """stdout of `mbd ARGS`, which must succeed."""
    done = subprocess.run([MBD, *map(str, args)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def mbd_json(*args: object) -> Any:
    return json.loads(run_mbd(*args))


def cli_list(x: Iterable[Any]) -> str:
    """A vector as the CLI's L: comma-separated, full precision."""
    return ",".join(repr(float(v)) for v in x)


def random_state(model: mbdbench.Model, seed: int = 0) -> Tuple[Vector, Vector, Vector]:
    """q (unit quaternions), qd, tau of a reproducible random state."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, model.nq)
    for joint in model.joints:  # quaternions: (w, x, y, z) last four of nq 4 and 7
        if joint["type"] in ("spherical", "free"):
            at = joint["q_index"] + joint["nq"] - 4
            q[at:at + 4] /= np.linalg.norm(q[at:at + 4])
    return q, rng.uniform(-1.0, 1.0, model.nv), rng.uniform(-2.0, 2.0, model.nv)


@pytest.fixture(scope="session")
def chain() -> mbdbench.Model:
    return mbdbench.Model("chain:n=10,joint=revolute")


SPECS = ["chain:n=10,joint=revolute", "chain:n=4,joint=spherical", "chain:n=3,joint=free",
         "chain:n=5,joint=cardan", "tree:n=12,branching=3",
         model_path("double-pendulum.json"), model_path("cylindrical-tree.json"),
         model_path("arm7.urdf")]


@pytest.fixture(scope="session", params=SPECS)
def any_model(request: pytest.FixtureRequest) -> mbdbench.Model:
    return mbdbench.Model(request.param)
