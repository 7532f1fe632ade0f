"""MJCF read through MuJoCo: published robots load unmodified and give MuJoCo's dynamics,
and what mbd does not model is refused, all of it at once (python/tests/mujoco_models.py)."""

import json
import os
import pathlib
import subprocess

import pytest

pytest.importorskip("mujoco", reason="MuJoCo's Python package is not installed")

import mujoco_models  # noqa: E402 (needs mujoco)
from conftest import LIBRARY_SOLVERS, MBD  # noqa: E402

import mbdbench  # noqa: E402

needs_models = pytest.mark.skipif(
    not mujoco_models.installed(),
    reason="the model packages of python/requirements-models.txt are not installed")


@needs_models
@pytest.mark.parametrize("path", mujoco_models.SAMPLE)
def test_sample_agrees_with_mujoco(path: str) -> None:
    r = mujoco_models.compare(os.path.join(mujoco_models.SITE, path), states=3,
                              solvers=LIBRARY_SOLVERS)
    assert r["compile_error"] is None, r["compile_error"]
    assert r["refused"] is None, r["refused"]
    for solver in LIBRARY_SOLVERS:  # every solver was checked, in one form or the other
        assert any(name.endswith(" " + solver) for name in r["errors"]), (solver, r["errors"])
    assert {"M", "inverse"} <= set(r["errors"])
    over = {k: v for k, v in r["errors"].items() if not v <= mujoco_models.TOL}
    assert not over, over


REFUSED = """<mujoco>
  <option density="1.2"/>
  <worldbody>
    <site name="top" pos="0 0 0.3"/>
    <body name="link">
      <joint name="hinge" type="hinge"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0 0 -0.5"/>
      <site name="tip" pos="0 0 -0.5"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="spring" stiffness="10">
      <site site="top"/>
      <site site="tip"/>
    </spatial>
  </tendon>
</mujoco>
"""


def test_unmodelled_elements_are_refused_together(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "refused.xml"
    path.write_text(REFUSED)
    with pytest.raises(mbdbench.Error) as refusal:
        mbdbench.Model(str(path))
    message = str(refusal.value)
    assert '<spatial name="spring"> stiffness' in message, message
    assert '<option> density="1.2"' in message, message


def test_info_json_stays_clean_when_mujoco_warns(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "nan.xml"
    path.write_text('<mujoco><worldbody><body><joint type="hinge"/>'
                    '<geom type="sphere" size="0.1" rgba="nan 1 1 1"/></body></worldbody></mujoco>')
    done = subprocess.run([MBD, "info", str(path), "--json"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "NaN" in done.stderr  # MuJoCo warned, on stderr
    assert json.loads(done.stdout)["nv"] == 1
