"""The commands mbd and mbd-bench of a pip-installed mbdbench: the programs bundled in
mbdbench/bin/ (pyproject.toml's [project.scripts]), run in this process's place."""

import os
import sys

BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def _run(program):
    path = os.path.join(BIN, program)
    if not os.access(path, os.X_OK):
        sys.exit(f"{program}: not in this installation ({path}); pip install mbdbench "
                 "builds it, `make` builds it in a checkout")
    os.execv(path, [program, *sys.argv[1:]])


def mbd():
    _run("mbd")


def mbd_bench():
    _run("mbd-bench")
