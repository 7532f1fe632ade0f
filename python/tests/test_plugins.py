"""load_plugin: the example plugin (build/plugins/textbook.so, `make plugins`) calls the
library's API inside this process and agrees with dense; a faulty plugin raises Error."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mbdbench
from conftest import ROOT, random_state

PLUGINS = os.path.join(ROOT, os.environ.get("MBD_TEST_PLUGINS", "build/plugins"))


@pytest.fixture(scope="module")
def textbook() -> str:
    path = os.path.join(PLUGINS, "textbook.so")
    if "textbook" not in mbdbench.solvers():
        assert mbdbench.load_plugin(path) == ["textbook"]
    return "textbook"


@pytest.mark.parametrize("spec", ["chain:n=6,joint=cardan", "tree:n=9,branching=2,base=free"])
def test_plugin_matches_dense(textbook: str, spec: str) -> None:
    model = mbdbench.Model(spec)
    q, qd, tau = random_state(model, 3)
    expected = model.forward(q, qd, tau, solver="dense")
    got = model.forward(q, qd, tau, solver=textbook)
    assert np.allclose(got, expected, rtol=1e-10, atol=1e-10)
    Q, QD, TAU = (np.array([x] * 5) for x in (q, qd, tau))
    assert np.array_equal(model.forward_batch(Q, QD, TAU, solver=textbook, threads=2),
                          np.array([got] * 5))


def test_plugin_is_listed_and_recommended(textbook: str) -> None:
    assert mbdbench.solvers()[-1] == textbook
    ranking = mbdbench.recommend(mbdbench.Model("chain:n=3,joint=revolute"))
    assert textbook in [row["solver"] for row in ranking]


@pytest.mark.parametrize("name, message", [
    ("textbook.so", "'textbook' is already taken"),
    ("faulty_null_forward.so", "function forward is NULL"),
    ("faulty_wrong_abi.so", "ABI 3"),
    ("missing.so", "cannot load the plugin"),
])
def test_faulty_plugin_raises(textbook: str, name: str, message: str) -> None:
    count = len(mbdbench.solvers())
    with pytest.raises(mbdbench.Error, match=message) as caught:
        mbdbench.load_plugin(os.path.join(PLUGINS, name))
    assert name in str(caught.value)
    assert len(mbdbench.solvers()) == count


def test_plugin_work_new_failure_is_named() -> None:
    """A NULL from the plugin's work_new: MemoryError naming the solver (once an empty one).
    In a child process: loaded here, the plugin would stay in this session's lists of
    solvers and methods, where the tests that run every solver would meet its failure."""
    child = textwrap.dedent(f"""
        import numpy as np
        import mbdbench
        mbdbench.load_plugin({os.path.join(PLUGINS, "faulty_work_new_fails.so")!r})
        model = mbdbench.Model("chain:n=3,joint=revolute")
        try:
            model.forward(model.neutral(), np.zeros(model.nv), solver="faulty")
        except MemoryError as e:
            print("forward:", e)
        # its derivatives (ABI 2) are a method of its name, whose work in bodies' fails so
        print("last method:", mbdbench.derivative_methods()[-1])
        try:
            model.forward_derivatives(model.neutral(), np.zeros(model.nv), method="faulty")
        except MemoryError as e:
            print("derivatives:", e)
    """)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert re.search(r"^forward: .*solver 'faulty'.*work_new failed", out, re.M), out
    assert "last method: faulty\n" in out, out
    assert re.search(r"^derivatives: .*forward_derivatives", out, re.M), out


@pytest.mark.parametrize("name, message", [
    ("faulty_dash_name.so", "starts with '-'"),
    ("faulty_row_name.so", "ends with '-momentum'"),
])
def test_plugin_names_that_collide_are_refused(name: str, message: str) -> None:
    with pytest.raises(mbdbench.Error, match=message):
        mbdbench.load_plugin(os.path.join(PLUGINS, name))
