"""Models: loading, attributes as `mbd info --json`, errors with the library's message."""

import pickle
from typing import List

import numpy as np
import pytest

import mbdbench
from conftest import mbd_json, model_path, run_mbd


def test_attributes_match_info_json(any_model: mbdbench.Model) -> None:
    info = mbd_json("info", any_model.spec, "--json")
    assert (any_model.nq, any_model.nv) == (info["nq"], info["nv"])
    assert any_model.joints == info["joints"]
    assert any_model.nbodies == sum(1 for j in info["joints"] if j["type"] != "fixed")


def test_fixed_joints_listed_after_the_moving_ones() -> None:
    model = mbdbench.Model(model_path("arm7.urdf"))
    info = mbd_json("info", model_path("arm7.urdf"), "--json")
    assert model.joints == info["joints"]


def test_floating_base_adds_a_free_joint() -> None:
    fixed = mbdbench.Model(model_path("quadruped.urdf"))
    floating = mbdbench.Model(model_path("quadruped.urdf"), floating_base=True)
    assert floating.floating_base and not fixed.floating_base
    assert floating.joints[0]["type"] == "free"
    assert (floating.nq, floating.nv) == (fixed.nq + 7, fixed.nv + 6)
    assert floating.joints == mbd_json("info", model_path("quadruped.urdf"), "--json",
                                       "--floating-base")["joints"]


def test_mjcf_joints_keep_mujocos_names() -> None:
    """An MJCF model (compiled by MuJoCo) names its joints as MuJoCo does, in qpos order."""
    path = model_path("mjcf/quadruped.xml")
    try:
        model = mbdbench.Model(path)
    except mbdbench.Error as error:
        if "this build has none" in str(error):
            pytest.skip("built without MuJoCo")
        raise
    assert [j["name"] for j in model.joints[:4]] == ["root", "FL_abduct", "FL_flex", "FL_knee"]
    assert (model.nq, model.nv) == (19, 18)
    assert model.joints == mbd_json("info", path, "--json")["joints"]


def test_neutral_pose() -> None:
    model = mbdbench.Model("chain:n=3,joint=free")
    assert np.array_equal(model.neutral(), np.tile([0, 0, 0, 1, 0, 0, 0.0], 3))


def test_name_gravity_repr() -> None:
    model = mbdbench.Model(model_path("double-pendulum.json"))
    assert model.name == "double-pendulum"
    assert np.array_equal(model.gravity, [0, 0, -9.81])
    assert "double-pendulum" in repr(model) and "nv=2" in repr(model)


def test_solvers_as_the_cli_lists_them() -> None:
    listed = [line.split()[0] for line in run_mbd("solvers").splitlines()]
    assert mbdbench.solvers() == listed
    assert "dense" in listed


def test_model_is_immutable(chain: mbdbench.Model) -> None:
    with pytest.raises(AttributeError):
        chain.nq = 3
    chain.joints[0]["name"] = "changed"
    assert chain.joints[0]["name"] != "changed"


def test_pickle_loads_again(chain: mbdbench.Model) -> None:
    copy = pickle.loads(pickle.dumps(chain))
    q, qd = np.full(10, 0.3), np.full(10, -0.2)
    assert isinstance(copy, mbdbench.Model)
    assert np.array_equal(copy.forward(q, qd), chain.forward(q, qd))


@pytest.mark.parametrize("spec, words", [
    ("chain:n=0,joint=revolute", ["chain", "n"]),
    ("no-such-family:n=3", ["no-such-family"]),
    ("/no/such/file.json", ["/no/such/file.json"]),
    (model_path("README.md"), ["README.md"]),
])
def test_load_errors_carry_the_library_message(spec: str, words: List[str]) -> None:
    with pytest.raises(mbdbench.Error) as caught:
        mbdbench.Model(spec)
    assert all(w in str(caught.value) for w in words), str(caught.value)
    assert caught.value.status < 0
    assert isinstance(caught.value, ValueError)


def test_constructor_arguments_checked() -> None:
    with pytest.raises(TypeError):
        mbdbench.Model()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        mbdbench.Model(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mbdbench.Model.__new__(mbdbench.Model)  # type: ignore[call-arg]
