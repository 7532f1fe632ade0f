"""The commands mbd and mbd-bench of a pip-installed mbdbench (pyproject.toml's
[project.scripts]): the programs that the wheel bundles in mbdbench/bin/, or, in an
editable install (pip install -e), the checkout's, run in this process's place."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _run(program: str) -> None:
    for path in (os.path.join(HERE, "bin", program), os.path.join(HERE, os.pardir, os.pardir, program)):
        if os.access(path, os.X_OK):
            os.execv(path, [program, *sys.argv[1:]])
    sys.exit(f"{program}: not in this installation ({os.path.join(HERE, 'bin')}); "
             "pip install . builds it, as make does in a checkout")


def mbd() -> None:
    _run("mbd")


def mbd_bench() -> None:
    _run("mbd-bench")
