#!/usr/bin/python3
"""The crossover chart from Python: which solver is fastest at each N, for two families.

Each solver's time per forward call over the fastest one's at the same N (1 = fastest),
as the report's chart 5 (report/crossover.gp), from a Google Benchmark file of mbd-bench
(default results/latest.json) or, with --live, timed here through mbdbench on generator
models (chain:n=N and tree:n=N,branching=2).

    PYTHONPATH=python /usr/bin/python3 python/examples/crossover.py [--live] [--out FILE.png]
"""

import argparse
import os
import sys
import timeit
from collections import defaultdict
from typing import Callable, DefaultDict, Dict, Optional

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import mbdbench  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)
FILE_FAMILIES = ("chain-revolute", "autotree-binary")
LIVE_FAMILIES = {"chain-revolute": "chain:n={},joint=revolute", "binary-tree": "tree:n={},branching=2"}
LIVE_N = (2, 5, 10, 20, 50, 100, 200)
ONE_STATE_SOLVERS = ("dense", "sparse", "bodies", "poisson-ldlt", "poisson-sweep")
MOMENTUM_SOLVERS = ("poisson-ldlt", "poisson-sweep")  # (q, p) -> (qd, pd): mbd solvers

Times = DefaultDict[str, DefaultDict[str, Dict[int, float]]]  # family, solver, N: ns


def new_times() -> Times:
    return defaultdict(lambda: defaultdict(dict))


def times_from_results(path: str) -> Times:
    """{family: {solver: {N: median ns}}} of the one-call rows (fd_SOLVER/FAMILY/n:N)."""
    times = new_times()
    for row in mbdbench.load_results(path):
        if row.get("aggregate_name") != "median" or not row["name"].startswith("fd_"):
            continue
        kind, family, n = row["name"].split("/")[:3]
        if family in FILE_FAMILIES:
            times[family][kind[3:]][int(n.split(":")[1])] = row["cpu_time"]
    return times


def time_forward(model: mbdbench.Model, solver: str) -> Optional[float]:
    """Seconds per model.forward (best of 5), or None where the solver has no such form."""
    rng = np.random.default_rng(0)
    q, qd, tau = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    forward: Callable[..., object] = model.forward_momentum if solver in MOMENTUM_SOLVERS \
        else model.forward

    def call() -> object:
        return forward(q, qd, tau, solver=solver)

    try:
        call()
    except mbdbench.Error:
        return None
    number = max(1, int(2e4 / model.nv))
    return min(timeit.repeat(call, number=number, repeat=5)) / number


def times_live() -> Times:
    times = new_times()
    for family, spec in LIVE_FAMILIES.items():
        for n in LIVE_N:
            model = mbdbench.Model(spec.format(n))
            for solver in ONE_STATE_SOLVERS:
                t = time_forward(model, solver)
                if t is not None:
                    times[family][solver][n] = 1e9 * t
            print(f"{family} N = {n}: timed", file=sys.stderr)
    return times


def plot(times: Times, title: str, out: str) -> None:
    fig, axes = plt.subplots(1, len(times), figsize=(6 * len(times), 4.5), squeeze=False)
    for ax, (family, by_solver) in zip(axes[0], sorted(times.items())):
        ns = sorted({n for t in by_solver.values() for n in t})
        fastest = {n: min(t[n] for t in by_solver.values() if n in t) for n in ns}
        for solver, t in sorted(by_solver.items()):
            xs = [n for n in ns if n in t]
            ax.plot(xs, [t[n] / fastest[n] for n in xs], marker="o", label=solver)
        ax.axhline(1.0, color="grey", linestyle=":")
        ax.set(xscale="log", yscale="log", xlabel="bodies N", ylabel="T / T(fastest)", title=family)
    axes[0][0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--results", default=os.path.join(ROOT, "results", "latest.json"))
    parser.add_argument("--live", action="store_true", help="time the solvers here through mbdbench")
    parser.add_argument("--out", default="crossover.png")
    args = parser.parse_args()
    if args.live:
        plot(times_live(), "Time relative to the fastest solver (timed through mbdbench)", args.out)
    else:
        plot(times_from_results(args.results),
             f"Time relative to the fastest solver ({os.path.basename(args.results)})", args.out)


if __name__ == "__main__":
    main()
