#!/usr/bin/env python3
"""test_tags.py: a reader with Universal Ctags follows the calls from mbd_forward to the
bodies sweep's kernels in algorithms/solvers/bodies_kernels.h, each hop by a tag.

The tags are those of `ctags -R` in the repository's root, which reads .ctags.d/mbd.ctags:
without it the lane-generic kernels, defined as LANE_FN(name), have no tag of their name
and the walk stops at bodies_sweep. From a function's definition (its lines, from the
tag's line to its end) the walk follows each name called, `name(` or `LANE_FN(name)`,
that has a function's tag, and a call through the solver's row, `->field(`, to the
function that the bodies row (mbd_solver_bodies) sets that field to. It passes where
bodies_sweep and the steps of its three passes are reached, each defined in
bodies_kernels.h; it prints their paths."""
import json
import os
import re
import subprocess
import sys
from collections import deque
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = "algorithms/solvers/bodies_kernels.h"
REACHED = ["bodies_sweep", "velocity_step", "articulated_step", "acceleration_step"]
ROW = "mbd_solver_bodies"
CALL = re.compile(r"\bLANE_FN\((\w+)\)|\b(\w+)\s*\(")
ROW_CALL = re.compile(r"->(\w+)\s*\(")
ROW_FIELD = re.compile(r"\.(\w+)\s*=\s*(\w+)")


Definition = Tuple[str, int, int]  # path, first line, last line


def definitions() -> Dict[str, List[Definition]]:
    """name -> [(path, first line, last line)] of every function and variable tagged."""
    tags = subprocess.run(["ctags", "-R", "--output-format=json", "--fields=+nKe", "-f", "-",
                           "algorithms", "include"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    found: Dict[str, List[Definition]] = {}
    for line in tags.splitlines():
        tag = json.loads(line)
        if tag.get("kind") in ("function", "variable") and "end" in tag:
            found.setdefault(tag["name"], []).append((tag["path"], tag["line"], tag["end"]))
    return found


@lru_cache(maxsize=None)
def text_of(definition: Definition) -> str:
    path, first, last = definition
    with open(os.path.join(ROOT, path), encoding="utf-8") as source:
        return "".join(source.readlines()[first - 1:last])


def walk(found: Dict[str, List[Definition]]) -> Dict[Definition, Optional[Definition]]:
    """Each definition reached from mbd_forward's -> the hop that reached it."""
    row = dict(ROW_FIELD.findall(text_of(found[ROW][0])))
    came_from: Dict[Definition, Optional[Definition]] = {d: None for d in found["mbd_forward"]}
    frontier = deque(came_from)
    while frontier:
        caller = frontier.popleft()
        text = text_of(caller)
        names = [a or b for a, b in CALL.findall(text)]
        names += [row[field] for field in ROW_CALL.findall(text) if field in row]
        for name in names:
            for callee in found.get(name, []):
                if callee not in came_from:
                    came_from[callee] = caller
                    frontier.append(callee)
    return came_from


def name_at(found: Dict[str, List[Definition]], definition: Definition) -> str:
    return next(n for n, ds in found.items() if definition in ds)


def main() -> int:
    found = definitions()
    came_from = walk(found)
    failed = 0
    for name in REACHED:
        target = next((d for d in found.get(name, []) if d[0] == KERNELS), None)
        if target not in came_from:
            print(f"test_tags: {name} in {KERNELS}: not reached from mbd_forward by tags "
                  f"(is .ctags.d/mbd.ctags there?)", file=sys.stderr)
            failed += 1
            continue
        path: List[str] = []
        at: Optional[Definition] = target
        while at:
            path.append(f"{name_at(found, at)} ({at[0]}:{at[1]})")
            at = came_from[at]
        print(" -> ".join(reversed(path)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
