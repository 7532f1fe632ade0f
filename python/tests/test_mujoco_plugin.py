"""The MuJoCo plugin (build/plugins/mujoco.so, built by make when the mujoco wheel is in
.venv/) from Python: mujoco-smooth and mujoco-forward give the qacc_smooth that MuJoCo's
Python package computes from the same MJCF file itself (python/tests/mujoco_models.py, the
coordinates matched), to 1e-10, on the project's MJCF models and the published sample.
tests/test_mujoco_plugin.c checks every joint type against dense."""

import os
from typing import List

import pytest

pytest.importorskip("mujoco", reason="MuJoCo's Python package is not installed")

import mujoco_models  # noqa: E402 (needs mujoco)
from conftest import ROOT  # noqa: E402

import mbdbench  # noqa: E402

PLUGIN = os.path.join(ROOT, os.environ.get("MBD_TEST_PLUGINS", "build/plugins"), "mujoco.so")
SOLVERS = ["mujoco-smooth", "mujoco-forward"]
# the project's MJCF models (arm-fingers.xml is a part that arm.xml includes)
PROJECT_MJCF = [os.path.join(ROOT, "models", "mjcf", name) for name in
                ("arm.xml", "ball-tree.xml", "passive.xml", "quadruped.xml", "two-joints.xml")]


@pytest.fixture(scope="module")
def plugin() -> List[str]:
    if not os.path.exists(PLUGIN):
        pytest.skip(f"{PLUGIN} not built (no mujoco wheel in .venv/)")
    if SOLVERS[0] not in mbdbench.solvers():
        assert mbdbench.load_plugin(PLUGIN) == SOLVERS
    return SOLVERS


def check_against_mujoco(path: str) -> None:
    r = mujoco_models.compare(path, states=3)
    assert r["compile_error"] is None and r["refused"] is None, r
    for solver in SOLVERS:
        assert r["errors"][f"qdd {solver}"] <= mujoco_models.TOL, (solver, r["errors"])


@pytest.mark.parametrize("path", PROJECT_MJCF, ids=os.path.basename)
def test_project_models_give_qacc_smooth(plugin: List[str], path: str) -> None:
    check_against_mujoco(path)


@pytest.mark.skipif(not mujoco_models.installed(),
                    reason="the model packages of python/requirements-models.txt are not installed")
@pytest.mark.parametrize("path", mujoco_models.SAMPLE)
def test_published_sample_gives_qacc_smooth(plugin: List[str], path: str) -> None:
    check_against_mujoco(os.path.join(mujoco_models.SITE, path))
