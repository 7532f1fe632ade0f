"""python/examples/crossover.py draws the crossover chart from the committed results."""

import os
import pathlib
import subprocess
import sys

from conftest import ROOT


def test_crossover_chart_from_results(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "crossover.png"
    done = subprocess.run([sys.executable, os.path.join(ROOT, "python", "examples", "crossover.py"),
                           "--out", str(out)], capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 10_000 and out.read_bytes()[:4] == b"\x89PNG"
