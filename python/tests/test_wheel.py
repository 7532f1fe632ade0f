"""The package as pip installs it (SLOW: about 2 minutes the first time, seconds after).

The wheel of this checkout is built as `pip install .` builds it (meson-python running
`make wheel-files`), at -O1 for speed (this tests the packaging, not the optimizer) and in
build/wheel-o1/ so that a second run builds only what changed; it is installed with its
declared dependencies (numpy, mujoco-core, pinned by python/requirements.txt, from pip's
cache or PyPI) into a fresh virtual environment, and used from another directory: forward
against this checkout's extension, an MJCF model (libmujoco found from the installed
mujoco package), the example, and the commands mbd and mbd-bench."""

import os
import pathlib
import subprocess
import sys
from typing import Dict, Optional, Tuple

import numpy as np
import pytest

import mbdbench
from conftest import ROOT, model_path, random_state

REQUIREMENTS = os.path.join(ROOT, "python", "requirements.txt")
BUILD_DIR = os.path.join(ROOT, "build", "wheel-o1")
Venv = Tuple[pathlib.Path, pathlib.Path, Dict[str, str]]  # its bin/, a directory elsewhere, the environment to run in


def run(*command: str, cwd: Optional[pathlib.Path] = None,
        env: Optional[Dict[str, str]] = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd, env=env)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A fresh virtual environment with the wheel installed: (its bin/, a directory outside
    the checkout, the environment to run in there: no MBD, no PYTHONPATH)."""
    tmp = tmp_path_factory.mktemp("wheel")
    # meson and ninja: beside this interpreter (.venv/bin), as in an activated environment
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
        "--config-settings=setup-args=-Dopt=-O1", f"--config-settings=build-dir={BUILD_DIR}",
        "-w", str(tmp / "dist"), ROOT, env=env)
    wheel, = (tmp / "dist").glob("mbdbench-*.whl")
    run(sys.executable, "-m", "venv", str(tmp / "venv"))
    bin_dir = tmp / "venv" / "bin"
    clean = {k: v for k, v in os.environ.items() if k not in ("MBD", "PYTHONPATH")}
    run(str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
        "-c", REQUIREMENTS, f"{wheel}[examples]", env=clean)
    away = tmp / "elsewhere"
    away.mkdir()
    return bin_dir, away, clean


def test_installed_package_agrees_with_the_checkout(venv: Venv) -> None:
    bin_dir, away, env = venv
    model = mbdbench.Model("chain:n=10,joint=revolute")
    q, qd, tau = random_state(model)
    script = ("import sys, numpy as np, mbdbench\n"
              "model = mbdbench.Model('chain:n=10,joint=revolute')\n"
              "q, qd, tau = (np.array(eval(a)) for a in sys.argv[1:4])\n"
              "print(mbdbench.__file__)\n"
              "print(repr(model.forward(q, qd, tau).tolist()))\n"
              "print(mbdbench._mbd_command())\n"
              "import importlib.metadata as m; print(m.version('mbdbench'), mbdbench.__version__)\n")
    out = run(str(bin_dir / "python"), "-c", script, *(repr(x.tolist()) for x in (q, qd, tau)),
              cwd=away, env=env).splitlines()
    assert out[0].startswith(str(bin_dir.parent)), out[0]  # the installed copy, not python/
    np.testing.assert_allclose(eval(out[1]), model.forward(q, qd, tau), rtol=1e-10, atol=1e-10)
    assert out[2] == os.path.join(os.path.dirname(out[0]), "bin", "mbd")  # recommend's mbd
    assert out[3] == f"{mbdbench.__version__} {mbdbench.__version__}"  # the wheel's is the library's


def test_installed_package_reads_mjcf_with_the_installed_mujoco(venv: Venv) -> None:
    bin_dir, away, env = venv
    path = model_path(os.path.join("mjcf", "arm.xml"))
    out = run(str(bin_dir / "python"), "-c", f"import mbdbench; print(mbdbench.Model({path!r}).nv)",
              cwd=away, env=env)
    assert int(out) == mbdbench.Model(path).nv


def test_example_runs_from_another_directory(venv: Venv) -> None:
    bin_dir, away, env = venv
    run(str(bin_dir / "python"), os.path.join(ROOT, "python", "examples", "crossover.py"),
        "--out", str(away / "crossover.png"), cwd=away, env=env)
    assert (away / "crossover.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("command", ["mbd", "mbd-bench"])
def test_commands_installed(venv: Venv, command: str) -> None:
    bin_dir, away, env = venv
    out = run(str(bin_dir / command), "--help", cwd=away, env=env)
    assert "usage" in out.lower()
