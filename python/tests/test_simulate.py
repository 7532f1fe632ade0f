"""simulate and simulate_ensemble against `mbd simulate` (CSV); recommend, load_results."""

import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any, Callable, Dict, Tuple

import numpy as np
import pytest

import mbdbench
from conftest import ROOT, cli_list, model_path, run_mbd


def cli_trajectory(model: mbdbench.Model, *args: object) -> Any:
    text = run_mbd("simulate", model.spec, *args)
    return np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)


@pytest.mark.parametrize("args, kwargs", [
    (["--integrator", "rk4", "--dt", "0.01", "--t1", "0.2"], dict(integrator="rk4", dt=0.01, t1=0.2)),
    (["--integrator", "dopri5", "--t1", "0.5", "--sample", "0.1"],
     dict(integrator="dopri5", t1=0.5, sample=0.1)),
    (["--integrator", "adams", "--t1", "0.3", "--rtol", "1e-6", "--solver", "bodies"],
     dict(integrator="adams", t1=0.3, rtol=1e-6, solver="bodies")),
])
def test_simulate_matches_the_cli(args: Tuple[object, ...], kwargs: Dict[str, Any]) -> None:
    model = mbdbench.Model("chain:n=4,joint=cardan")
    q0, qd0 = np.linspace(-0.5, 0.5, model.nq), np.linspace(0.2, -0.2, model.nv)
    rows = cli_trajectory(model, *args, "--q0", cli_list(q0), "--qd0", cli_list(qd0))
    got = model.simulate(q0=q0, qd0=qd0, **kwargs)
    nq, nv = model.nq, model.nv
    assert got["t"].shape == (rows.shape[0],)
    assert got["q"].shape == (rows.shape[0], nq) and got["qd"].shape == (rows.shape[0], nv)
    assert np.allclose(got["t"], rows[:, 0], rtol=1e-14, atol=1e-14)
    assert np.allclose(got["q"], rows[:, 1:1 + nq], rtol=1e-12, atol=1e-12)
    assert np.allclose(got["qd"], rows[:, 1 + nq:1 + nq + nv], rtol=1e-12, atol=1e-12)
    assert np.allclose(got["kinetic"], rows[:, -3], rtol=1e-12, atol=1e-12)
    assert got["stats"]["steps"] > 0


def test_simulate_momentum_and_loops() -> None:
    model = mbdbench.Model("chain:n=3,joint=revolute")
    got = model.simulate("rk4", 0.1, dt=0.01, solver="poisson-sweep")
    assert "p" in got and got["p"].shape == got["qd"].shape
    loops = mbdbench.Model(model_path("four-bar.json"))
    rows = cli_trajectory(loops, "--integrator", "rk4", "--dt", "0.01", "--t1", "0.1",
                          "--q0", cli_list(loops.neutral() + 0.1), "--project-initial")
    got = loops.simulate("rk4", 0.1, dt=0.01, q0=loops.neutral() + 0.1, project_initial=True)
    assert np.allclose(got["q"], rows[:, 1:1 + loops.nq], rtol=1e-10, atol=1e-10)
    assert got["phi_norm"].shape == got["t"].shape
    with pytest.raises(ValueError, match="violates the loop constraints"):
        loops.simulate("rk4", 0.1, dt=0.01, q0=loops.neutral() + 0.1)


@pytest.mark.parametrize("kwargs, message", [
    (dict(integrator="euler", t1=1), "integrator"),
    (dict(integrator="rk4", t1=1), "dt: missing"),
    (dict(integrator="rk4", t1=1, dt=0.1, rtol=1e-6), "not for rk4"),
    (dict(integrator="dopri5", t1=1, dt=0.1), "not for dopri5"),
    (dict(integrator="dopri5", t1=-1), "t1"),
    (dict(integrator="dopri5", t1=1, sample=2), "sample"),
    (dict(integrator="dopri5", t1=1, formulation="energy"), "formulation"),
    (dict(integrator="dopri5", t1=1, baumgarte=(1, 1)), "has no loops"),
])
def test_simulate_options_checked_as_the_cli(kwargs: Dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mbdbench.Model("chain:n=3,joint=revolute").simulate(**kwargs)


def test_simulate_failure_is_an_error() -> None:
    model = mbdbench.Model("chain:n=3,joint=revolute")
    with pytest.raises(mbdbench.Error, match="simulate: dense rk4"):
        model.simulate("rk4", 0.1, dt=0.01, qd0=[1e200, 0, 0])  # overflows in the first step
    with pytest.raises(mbdbench.Error, match="qd0: element 0 is nan"):  # refused as given
        model.simulate("rk4", 0.1, dt=0.01, qd0=[np.nan, 0, 0])


@pytest.mark.parametrize("call, name", [
    (lambda m: m.simulate("rk4", 1.0, dt=1e-300), "dt: 1e-300"),
    (lambda m: m.simulate("dopri5", 1.0, sample=1e-12), "sample: 1e-12"),
    (lambda m: m.simulate_ensemble(1.0, 1e-300, runs=2), "dt: 1e-300"),
])
def test_step_counts_beyond_the_limit_are_refused(call: Callable[[mbdbench.Model], object],
                                                  name: str) -> None:
    """1e9 steps at most, as the CLI: dt = 1e-300 ran for ever, sample=1e-12 ran out of memory
    with an empty MemoryError."""
    with pytest.raises(mbdbench.Error, match=name):
        call(mbdbench.Model("chain:n=3,joint=revolute"))


@pytest.mark.parametrize("code", [
    "m.simulate('rk4', 100.0, dt=1e-7)",
    "m.simulate_ensemble(100.0, 1e-7, runs=4)",
])
def test_ctrl_c_stops_a_long_simulation(code: str) -> None:
    """SIGINT reaches Python's handler between steps (an ensemble's: between reports, here
    every step): KeyboardInterrupt within a second. The child installs that handler itself:
    a Python started with SIGINT ignored (a job started in the background by a shell without
    job control, as a CI script may be) keeps ignoring it."""
    script = ("import signal, sys, time, mbdbench\n"
              "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "m = mbdbench.Model('chain:n=3,joint=revolute')\n"
              "print('ready', flush=True)\n"
              "try:\n"
              f"    {code}\n"
              "except KeyboardInterrupt:\n"
              "    print('interrupted', flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    start = time.monotonic()
    try:
        out, _ = child.communicate(timeout=5)
    finally:
        child.kill()
    assert out == "interrupted\n"
    assert time.monotonic() - start < 2.0


def test_ensemble_matches_the_cli() -> None:
    model = mbdbench.Model("chain:n=3,joint=revolute")
    K = 5
    text = run_mbd("simulate", model.spec, "--integrator", "rk4", "--dt", "0.01", "--t1", "0.05",
                   "--ensemble", K, "--spread", "0.3", "--seed", "7", "--threads", "1")
    rows = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    got = model.simulate_ensemble(0.05, 0.01, runs=K, spread=0.3, seed=7, threads=1)
    T = got["t"].shape[0]
    assert got["q"].shape == (K, T, model.nq) and rows.shape[0] == K * T
    by_run = rows.reshape(T, K, -1).transpose(1, 0, 2)
    assert np.allclose(got["t"], by_run[0, :, 1], rtol=1e-14)
    assert np.allclose(got["q"], by_run[:, :, 2:2 + model.nq], rtol=1e-14, atol=1e-15)
    assert np.allclose(got["qd"], by_run[:, :, 2 + model.nq:-1], rtol=1e-14, atol=1e-15)
    assert (got["status"] == 0).all()


def test_ensemble_from_states_equals_single_runs() -> None:
    model = mbdbench.Model("chain:n=4,joint=revolute")
    states = np.random.default_rng(3).uniform(-1, 1, (6, model.nq + model.nv))
    states[2, 0] = np.nan
    got = model.simulate_ensemble(0.1, 0.01, states=states, sample=0.05)
    assert np.allclose(got["t"], [0, 0.05, 0.1])
    assert got["status"][2] != 0 and np.isnan(got["q"][2, 1:]).all()  # from its failure on
    assert got["t_failed"][2] == 0.0 and np.isnan(got["t_failed"][0])
    for k in (0, 5):
        one = model.simulate("rk4", 0.1, dt=0.01, sample=0.05, q0=states[k, :4], qd0=states[k, 4:])
        assert np.allclose(got["q"][k], one["q"], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="whole steps"):
        model.simulate_ensemble(0.1, 0.01, states=states, sample=0.015)
    with pytest.raises(ValueError, match="states"):
        model.simulate_ensemble(0.1, 0.01, states=states, runs=6)


def test_recommend_ranks_the_solvers() -> None:
    ranking = mbdbench.recommend(mbdbench.Model("chain:n=3,joint=revolute"), formulation="acceleration")
    assert ranking and {"solver", "median_ns", "ratio_to_fastest"} <= set(ranking[0])
    assert ranking[0]["ratio_to_fastest"] == 1.0
    assert {r["solver"] for r in ranking} <= set(mbdbench.solvers())


def test_load_results(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "results.json"
    rows = [{"name": "fd/chain/dense", "real_time": 1.5, "time_unit": "us"}]
    path.write_text(json.dumps({"context": {}, "benchmarks": rows}))
    assert mbdbench.load_results(path) == rows
    path.write_text("[]")
    with pytest.raises(ValueError, match="Google Benchmark"):
        mbdbench.load_results(path)
