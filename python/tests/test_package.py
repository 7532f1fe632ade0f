"""The package as its users see it: its version, its documentation in help(), and its types
(mypy --strict over the package, the tests and the examples, with python/mypy.ini)."""

import inspect
import os
import pydoc
import re
import subprocess
import sys
from typing import Any, Callable, List, Tuple

import pytest

import mbdbench
from conftest import ROOT, run_mbd


def test_version_is_the_librarys() -> None:
    # `mbd --version`'s first line: "mbdbench VERSION"; both from mbd_version(), the release
    # that the file VERSION names (the wheel's version too, through meson.build)
    assert run_mbd("--version").splitlines()[0] == f"mbdbench {mbdbench.__version__}"
    with open(os.path.join(ROOT, "VERSION"), encoding="utf-8") as f:
        assert mbdbench.__version__ == f.read().strip()


def public_callables() -> List[Tuple[str, Callable[..., Any]]]:
    found = [(name, getattr(mbdbench, name)) for name in mbdbench.__all__
             if callable(getattr(mbdbench, name)) and name not in ("Error", "Model")]
    found += [(f"Model.{name}", member) for name, member in vars(mbdbench.Model).items()
              if callable(member) and not name.startswith("_")]
    found += [(f"Model.{name}", getattr(mbdbench.Model, name))
              for name in dir(mbdbench.Model) if not name.startswith("_")
              and callable(getattr(mbdbench.Model, name)) and f"Model.{name}" not in dict(found)]
    return found


@pytest.mark.parametrize("name, function", public_callables(), ids=lambda x: str(x))
def test_every_function_documents_its_signature_and_arrays(name: str,
                                                           function: Callable[..., Any]) -> None:
    doc = inspect.getdoc(function) or ""
    short = name.rsplit(".", 1)[-1]
    assert doc.startswith(f"{short}("), f"{name}: its docstring does not open with its call"
    shown = pydoc.render_doc(function, renderer=pydoc.plaintext)  # type: ignore[attr-defined]
    assert all(line.strip() in shown for line in doc.splitlines()), f"{name}: not in help()"
    if any(shape in doc for shape in ("(nq,)", "(nv,", "(nv, nv)", "(K,")):
        assert re.search(r"float|intp|intc", doc), f"{name}: arrays without their dtype"


def test_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", os.path.join("python", "mypy.ini"),
         "--cache-dir", os.path.join("build", "mypy-cache"),
         os.path.join("python", "mbdbench"), os.path.join("python", "examples"),
         os.path.join("python", "tests")],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env=dict(os.environ, MYPYPATH=os.path.join(ROOT, "python")))
    assert done.returncode == 0, done.stdout + done.stderr
