"""Interop: models from text and from MuJoCo's MjModel, and joint orders mapped by name to
MuJoCo's and Pinocchio's, checked against the real packages (mujoco and pin in .venv/) at
random states: the same model loaded in both, qdd compared to 1e-10."""

import os
import pickle
from typing import Any, List, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mbdbench
from conftest import ROOT, Vector, random_state

mujoco = pytest.importorskip("mujoco")

TOL = 1e-10
MJCF = os.path.join(ROOT, "models", "mjcf")
FILES = [os.path.join(ROOT, "models", f) for f in ("arm7.urdf", "double-pendulum.json")] + \
        [os.path.join(MJCF, f) for f in ("quadruped.xml", "ball-tree.xml", "arm.xml")]


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def same_dynamics(a: mbdbench.Model, b: mbdbench.Model) -> bool:
    """Equal sizes, joints and qdd (bit for bit) at a random state."""
    q, qd, tau = random_state(a, 3)
    return (a.nq, a.nv, a.joints) == (b.nq, b.nv, b.joints) and \
        np.array_equal(a.forward(q, qd, tau), b.forward(q, qd, tau))


# -- Model.from_string ----------------------------------------------------------------------

@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_from_string_is_the_file(path: str) -> None:
    # name: the file's path, so that arm.xml's <include> resolves beside it
    model = mbdbench.Model.from_string(read(path), name=path)
    assert same_dynamics(model, mbdbench.Model(path))
    assert model.spec is None and "<text>" in repr(model)
    assert same_dynamics(pickle.loads(pickle.dumps(model)), model)


def test_from_string_floating_base() -> None:
    path = os.path.join(ROOT, "models", "quadruped.urdf")
    model = mbdbench.Model.from_string(read(path), floating_base=True)
    assert model.floating_base and same_dynamics(model, mbdbench.Model(path, floating_base=True))


@pytest.mark.parametrize("text, message", [
    ("{\"bodies\": 3}", "robot.json: "),
    ("<robot name='r'><link name='a'/><joint name='j' type='revolute'/></robot>",
     "robot.json:1: joint \"j\": missing <parent"),
    ("<mujoco><worldbody><body><joint/></body></worldbody></mujoco>", "robot.json: MuJoCo"),
    ("<mujoco><include file='no-such-file.xml'/></mujoco>", "no-such-file.xml"),
])
def test_from_string_errors_name_the_text(text: str, message: str) -> None:
    with pytest.raises(mbdbench.Error, match=message):
        mbdbench.Model.from_string(text, name="robot.json")


def test_from_string_refuses_nul_and_recommend() -> None:
    with pytest.raises(ValueError, match="text: contains a NUL"):
        mbdbench.Model.from_string("{}\0")
    model = mbdbench.Model.from_string(read(FILES[1]))
    with pytest.raises(mbdbench.Error, match="recommend: model .* has no file"):
        mbdbench.recommend(model)


def prefixed(prefix: str) -> st.SearchStrategy[str]:
    return st.text(max_size=40).map(lambda rest: prefix + rest)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(text=st.one_of(st.text(max_size=40), prefixed("<mujoco>"), prefixed("<robot name='r'>"),
                      prefixed('{"bodies": [')))
def test_any_text_loads_or_raises(text: str) -> None:
    """Text of any kind, and the beginnings of each format: a model or a one-line
    ValueError (mbdbench.Error, or a NUL in the text), never a crash."""
    try:
        model = mbdbench.Model.from_string(text, name="fuzz")
    except ValueError as e:
        assert str(e) and "\n" not in str(e)
        return
    assert model.nv == len(model.forward(model.neutral(), np.zeros(model.nv)))


# -- Model.from_mujoco ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["quadruped.xml", "ball-tree.xml", "arm.xml"])
def test_from_mujoco_is_the_file(name: str) -> None:
    path = os.path.join(MJCF, name)
    model = mbdbench.Model.from_mujoco(mujoco.MjModel.from_xml_path(path))
    assert same_dynamics(model, mbdbench.Model(path))
    assert model.spec is None and model.left_out == mbdbench.Model(path).left_out
    with pytest.raises(TypeError, match="MjModel"):
        pickle.dumps(model)


def test_from_mujoco_spec_without_file() -> None:
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(name="link", pos=[0, 0, 1])
    body.add_joint(name="hinge", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0])
    body.add_geom(size=[0.1, 0, 0], pos=[0.5, 0, 0], mass=2.0)
    model = mbdbench.Model.from_mujoco(spec.compile(), name="pendulum")
    # a point-like mass of 2 kg (sphere radius 0.1: I = 2/5 m r^2) 0.5 m from the axis
    inertia = 2.0 * 0.5**2 + 0.4 * 2.0 * 0.1**2
    assert model.joints[0]["name"] == "hinge"
    assert model.mass_matrix([0.0])[0, 0] == pytest.approx(inertia, rel=1e-12)


def test_from_mujoco_refuses() -> None:
    with pytest.raises(TypeError, match="mjmodel: expected a mujoco.MjModel, got str"):
        mbdbench.Model.from_mujoco("quadruped.xml")
    fluid = mujoco.MjModel.from_xml_string(
        "<mujoco><option density='1.2'/><worldbody><body><joint/><geom size='.1'/>"
        "</body></worldbody></mujoco>")
    with pytest.raises(mbdbench.Error, match="^fluid: .*fluid"):
        mbdbench.Model.from_mujoco(fluid, name="fluid")


def test_from_mujoco_other_version(monkeypatch: pytest.MonkeyPatch) -> None:
    m = mujoco.MjModel.from_xml_path(os.path.join(MJCF, "ball-tree.xml"))
    monkeypatch.setattr(mbdbench._mbdbench, "mujoco_version", "0.0.1")
    with pytest.raises(mbdbench.Error, match="links MuJoCo 0.0.1"):
        mbdbench.Model.from_mujoco(m)


# -- against MuJoCo: permutation_to and mujoco_velocity_map ----------------------------------

def mujoco_names(m: Any) -> List[str]:
    return [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]


@pytest.mark.parametrize("name", ["quadruped.xml", "ball-tree.xml"])
def test_qdd_matches_mujoco(name: str) -> None:
    m = mujoco.MjModel.from_xml_path(os.path.join(MJCF, name))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ACTUATION | \
        mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    d = mujoco.MjData(m)
    model = mbdbench.Model.from_mujoco(m)
    qi, vi = model.permutation_to(mujoco_names(m))
    q, qd, tau = random_state(model, 7)
    T, c = model.mujoco_velocity_map(q, qd)
    d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q[qi], (T @ qd)[vi], (T @ tau)[vi]
    mujoco.mj_forward(m, d)
    qacc = T @ model.forward(q, qd, tau) + c
    assert np.max(np.abs(qacc[vi] - d.qacc_smooth)) <= TOL * (1 + np.max(np.abs(qacc)))
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    H = model.mass_matrix(q)
    assert np.allclose((T @ H @ T.T)[np.ix_(vi, vi)], M, rtol=0, atol=TOL)


def test_mujoco_velocity_map_is_orthogonal() -> None:
    model = mbdbench.Model(os.path.join(MJCF, "quadruped.xml"))
    q, qd, _ = random_state(model, 2)
    T, c = model.mujoco_velocity_map(q, qd)
    assert np.allclose(T @ T.T, np.eye(model.nv), atol=1e-14)
    assert np.array_equal(T[6:, 6:], np.eye(model.nv - 6)) and not c[6:].any()
    with pytest.raises(ValueError, match="q, qd: expected shapes"):
        model.mujoco_velocity_map(q[1:], qd)


# -- against Pinocchio ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pin() -> Any:
    return pytest.importorskip("pinocchio")


def pinocchio_model(pin: Any, path: str, floating: bool, gravity: Vector) -> Any:
    if not path.endswith(".xml"):
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating \
            else pin.buildModelFromUrdf(path)
    pm = pin.buildModelFromMJCF(path)
    pm.gravity.linear = gravity  # Pinocchio's MJCF reader keeps its own, -9.81 z
    return pm


# A URDF fixed and floating (Pinocchio's free flyer); MJCF ball joints (its spherical ones).
@pytest.mark.parametrize("name, floating", [("quadruped.urdf", True), ("quadruped.urdf", False),
                                            ("mjcf/ball-tree.xml", False)])
def test_qdd_matches_pinocchio(pin: Any, name: str, floating: bool) -> None:
    path = os.path.join(ROOT, "models", name)
    model = mbdbench.Model(path, floating_base=floating)
    pm = pinocchio_model(pin, path, floating, model.gravity)
    names = list(pm.names)[1:]  # [0] is "universe"
    if floating:  # Pinocchio names the free joint it adds root_joint
        names[0] = model.joints[0]["name"]
    qi, vi = model.permutation_to(names, convention="pinocchio")
    assert sorted(qi) == list(range(model.nq)) and sorted(vi) == list(range(model.nv))
    q, qd, tau = random_state(model, 11)
    a = pin.aba(pm, pm.createData(), q[qi], qd[vi], tau[vi])
    qdd = model.forward(q, qd, tau)
    assert np.max(np.abs(qdd[vi] - a)) <= TOL * (1 + np.max(np.abs(qdd)))
    back = np.empty(model.nv)
    back[vi] = a  # and from Pinocchio's order to ours
    assert np.max(np.abs(back - qdd)) <= TOL * (1 + np.max(np.abs(qdd)))


# -- permutation_to -------------------------------------------------------------------------

def coordinates(model: mbdbench.Model, names: List[str]) -> Tuple[int, int]:
    sizes = {j["name"]: (j["nq"], j["nv"]) for j in model.joints}
    return sum(sizes[n][0] for n in names), sum(sizes[n][1] for n in names)


@settings(max_examples=40, deadline=None)
@given(order=st.permutations(range(5)), data=st.data())
def test_permutation_to_any_order(order: List[int], data: st.DataObject) -> None:
    model = mbdbench.Model(os.path.join(MJCF, "quadruped.xml"))
    moving = [j["name"] for j in model.joints if j["nv"] > 0]
    names = [moving[k] for k in order] + \
        data.draw(st.lists(st.sampled_from(moving[5:]), unique=True))
    for convention in ("mbd", "pinocchio"):
        qi, vi = model.permutation_to(names, convention)
        assert (len(qi), len(vi)) == coordinates(model, names)
        assert len(set(qi)) == len(qi) and len(set(vi)) == len(vi)
    q, _, _ = random_state(model, 1)
    qi, vi = model.permutation_to(names, "pinocchio")
    start = coordinates(model, names[:names.index("root")])[0]
    free = q[qi][start:start + 7]  # Pinocchio's (x, y, z, qx, qy, qz, qw)
    assert np.array_equal(free, np.concatenate([q[:3], q[4:7], q[3:4]]))


def test_permutation_to_refuses() -> None:
    model = mbdbench.Model(os.path.join(MJCF, "quadruped.xml"))
    for names, message in [(["root", "nope"], "'nope' is not a moving joint of model "
                            "quadruped"), (["root", "root"], "joint 'root' given twice")]:
        with pytest.raises(ValueError, match=message):
            model.permutation_to(names)
    with pytest.raises(TypeError, match="one str"):
        model.permutation_to("root")
    with pytest.raises(ValueError, match="convention: expected one of mbd, pinocchio"):
        model.permutation_to(["root"], "mujoco")
    cardan = mbdbench.Model("chain:n=2,joint=cardan")
    name = cardan.joints[0]["name"]
    assert cardan.permutation_to([name])[1].tolist() == [0, 1]
    with pytest.raises(ValueError, match="cardan, which has no Pinocchio counterpart"):
        cardan.permutation_to([name], "pinocchio")
