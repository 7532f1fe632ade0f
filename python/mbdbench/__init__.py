"""mbdbench: forward and inverse dynamics of rigid multibody systems, on numpy arrays.

A thin layer over the C library libmbd (include/mbd.h): a Model is loaded once and then
read-only, so any number of Python threads may share it; every call takes a workspace of
its own. Arrays in are float64 vectors of the model's sizes (nq positions, nv velocities),
C-contiguous float64 used as they are, anything else converted once; arrays out are new.
Units are SI (m, kg, s, rad, N, N m); spatial vectors are in body coordinates, motion as
(w; v_O), force as (n_O; f). See docs/python.md.

    import mbdbench
    model = mbdbench.Model("chain:n=10,joint=revolute")
    qdd = model.forward(model.neutral(), np.zeros(model.nv), np.zeros(model.nv))
"""

import json
import os
import shutil
import subprocess

# The extension first: its OpenBLAS (the OpenMP build, as mbd links) is then the one that
# the process loads, numpy's included; after numpy, numpy's choice (one libopenblas.so.0).
from ._mbdbench import Error, derivative_methods, solvers  # isort: skip
from ._mbdbench import Model as _Model  # isort: skip
from . import _mbdbench  # isort: skip

import numpy as np

__all__ = ["Model", "Error", "solvers", "derivative_methods", "load_plugin", "recommend", "load_results"]

# The CLI's defaults (src/cmd_simulate.c, src/cli.h).
DEFAULT_RTOL = 1e-8
DEFAULT_ATOL = 1e-10
DEFAULT_BAUMGARTE = (10.0, 10.0)
MAX_TIME = 1e9
INITIAL_TOL = 1e-8      # |Phi|, |dPhi/dt| at the start of a simulation with loops
PROJECTION_TOL = 1e-12  # project_initial's Gauss-Newton tolerance
INTEGRATORS = ("rk4", "dopri5", "adams")


def _positive(name, value, maximum=MAX_TIME):
    value = float(value)
    if not 0.0 < value <= maximum:
        raise ValueError(f"{name}: expected a number in (0, {maximum:g}], got {value!r}")
    return value


class Model(_Model):
    __doc__ = _Model.__doc__
    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        # The C type loads the model in __new__ from the arguments as given, so a subclass
        # whose __init__ takes others could not work: final, as bool is.
        raise TypeError("mbdbench.Model cannot be subclassed: hold a Model in an attribute instead")

    def _initial_state(self, q0, qd0):
        """q0 and qd0 as float64 copies, the neutral pose at rest where None (the CLI's)."""
        q0 = self.neutral() if q0 is None else np.array(q0, dtype=np.float64)
        qd0 = np.zeros(self.nv) if qd0 is None else np.array(qd0, dtype=np.float64)
        return q0, qd0

    def simulate(self, integrator, t1, dt=None, rtol=None, atol=None, solver="dense",
                 formulation=None, q0=None, qd0=None, sample=None, baumgarte=None,
                 project_initial=False):
        """simulate(integrator, t1, dt=None, rtol=None, atol=None, solver='dense',
        formulation=None, q0=None, qd0=None, sample=None, baumgarte=None,
        project_initial=False) -> dict

        The free motion (tau = 0) from (q0 (nq,), qd0 (nv,)) (default: the neutral pose at
        rest) over [0, t1] s, as `mbd simulate` with the same options and defaults, by the
        library's mbd_simulate (SUNDIALS), without the GIL. integrator: 'rk4' (fixed step dt,
        required), 'dopri5' or 'adams' (adaptive: rtol default 1e-8, atol 1e-10; no dt).
        formulation: 'acceleration' (state (q, qd)) or 'momentum' (state (q, p)); None: the
        solver's first (acceleration where it has it). sample: report t = 0, sample, ...,
        t1 exactly (dense output); None: every step. A model with loops runs
        forward_constrained ('dense' or 'bodies', acceleration) with baumgarte (alpha, beta)
        1/s (default 10, 10), and must start on its constraints (|Phi|, |dPhi/dt| <= 1e-8)
        unless project_initial moves it there.

        Returns a dict of arrays: t (T,) s, q (T, nq), qd (T, nv), kinetic and potential
        (T,) J, p (T, nv) in the momentum formulation, phi_norm and phid_norm (T,) with
        loops; and 'stats': steps, rejected, rhs_evals, energy_drift, max_phi_norm.
        Raises mbdbench.Error where the integration fails (naming the body, as the CLI)."""
        if integrator not in INTEGRATORS:
            raise ValueError(f"integrator: expected one of {', '.join(INTEGRATORS)}, got {integrator!r}")
        t1 = _positive("t1", t1)
        if integrator == "rk4":
            if rtol is not None or atol is not None:
                raise ValueError("rtol, atol: not for rk4, which takes a fixed step dt")
            if dt is None:
                raise ValueError("dt: missing (rk4's step size)")
            dt, rtol, atol = _positive("dt", dt), 0.0, 0.0
        else:
            if dt is not None:
                raise ValueError(f"dt: not for {integrator}, which is adaptive (rtol, atol)")
            rtol = _positive("rtol", DEFAULT_RTOL if rtol is None else rtol, 1.0)
            atol = _positive("atol", DEFAULT_ATOL if atol is None else atol)
            dt = 0.0
        sample = 0.0 if sample is None else _positive("sample", sample, t1)
        if formulation not in (None, "acceleration", "momentum"):
            raise ValueError(f"formulation: expected acceleration or momentum, got {formulation!r}")
        q0, qd0 = self._initial_state(q0, qd0)
        baumgarte = self._loop_options(solver, formulation, baumgarte, project_initial)
        if self.nloops:
            q0, qd0 = self._start_on_loops(q0, qd0, project_initial)
        return self._simulate(q0, qd0, integrator, formulation, t1, dt, rtol, atol, sample,
                              solver, baumgarte)

    def _loop_options(self, solver, formulation, baumgarte, project_initial):
        """Baumgarte's (alpha, beta) for mbd_simulate, the loop options checked as the CLI."""
        if not self.nloops:
            if baumgarte is not None or project_initial:
                raise ValueError(f"{'baumgarte' if baumgarte is not None else 'project_initial'}: "
                                 f"model {self.name} has no loops")
            return (0.0, 0.0)
        if solver not in ("dense", "bodies"):
            raise ValueError(f"solver: a model with loops needs dense or bodies, got {solver!r}")
        if formulation == "momentum":
            raise ValueError("formulation: a model with loops runs in the acceleration formulation only")
        alpha, beta = DEFAULT_BAUMGARTE if baumgarte is None else map(float, baumgarte)
        if not (alpha >= 0 and beta >= 0 and np.isfinite(alpha) and np.isfinite(beta)):
            raise ValueError(f"baumgarte: expected two finite numbers >= 0, got {baumgarte!r}")
        return (alpha, beta)

    def _start_on_loops(self, q0, qd0, project_initial):
        """The initial state on the loop constraints (projected if asked), or ValueError."""
        if project_initial:
            q0, qd0 = self.project_constraints(q0, qd0, PROJECTION_TOL)
        phi, phid = self.constraint_violation(q0, qd0)
        if np.linalg.norm(phi) > INITIAL_TOL or np.linalg.norm(phid) > INITIAL_TOL:
            raise ValueError(
                f"q0, qd0: the initial state violates the loop constraints (|Phi| = "
                f"{np.linalg.norm(phi):.3g}, |dPhi/dt| = {np.linalg.norm(phid):.3g}, over "
                f"{INITIAL_TOL:g}); project_initial=True moves it onto them")
        return q0, qd0

    def simulate_ensemble(self, t1, dt, runs=None, states=None, q0=None, qd0=None, spread=None,
                          seed=None, sample=None, solver="dense", threads=None, simd=True):
        """simulate_ensemble(t1, dt, runs=None, states=None, q0=None, qd0=None, spread=None,
        seed=None, sample=None, solver='dense', threads=None, simd=True) -> dict

        K runs of the free motion by classic RK4 with the fixed step dt (s) over [0, t1] on
        the library's batch (mbd_simulate_ensemble: lanes x OpenMP threads, None: all), as
        `mbd simulate --ensemble K`, without the GIL. The initial states, as the CLI's:
        states (K, nq + nv): each run's q then qd (--states; no q0, qd0 or spread); or
        runs K from q0 (nq,) + spread * u with u uniform in [-1, 1) per coordinate, drawn
        by the CLI's generator from seed (default 1), and qd0 (nv,) (--spread, --seed;
        both default to the neutral pose at rest, spread 0). sample: report every
        sample / dt steps (a whole number), None: every step; t1 is reported too.

        Returns a dict: t (T,) s, q (K, T, nq), qd (K, T, nv), status (K,) ints (0: the run
        reached t1) and t_failed (K,) s (NaN where it did); a failed run's rows are NaN
        from its failure on, as in the CLI's CSV."""
        t1, dt = _positive("t1", t1), _positive("dt", dt)
        if states is not None:
            if any(x is not None for x in (q0, qd0, spread, runs)):
                raise ValueError("states: gives every initial state: no runs, q0, qd0 or spread")
            states = np.asarray(states, dtype=np.float64)
            if states.ndim != 2 or states.shape[1] != self.nq + self.nv:
                raise ValueError(f"states: expected shape (K, nq + nv) = (K, {self.nq + self.nv}),"
                                 f" got {states.shape}")
            Q0, QD0 = states[:, :self.nq], states[:, self.nq:]
        else:
            if runs is None or isinstance(runs, bool) or int(runs) != runs or runs < 1:
                raise ValueError(f"runs: expected the number of runs K >= 1, got {runs!r}")
            if seed is not None and spread is None:
                raise ValueError("seed: only with spread")
            q0, qd0 = self._initial_state(q0, qd0)
            Q0, QD0 = _spread_states(int(runs), q0, qd0, 0.0 if spread is None else spread,
                                     1 if seed is None else seed)
        every = 1
        if sample is not None:
            every = round(_positive("sample", sample, t1) / dt)
            if every < 1 or abs(every * dt - sample) > 1e-9 * sample:
                raise ValueError(f"sample: an ensemble reports at whole steps: {sample:g} is not "
                                 f"a multiple of dt {dt:g}")
        threads = 0 if threads is None else threads
        return self._simulate_ensemble(np.ascontiguousarray(Q0), np.ascontiguousarray(QD0), t1,
                                       dt, every, solver, threads, 0 if simd else 1)


def _uniform_pm1(seed, index):
    """The CLI's draw (src/cmd_ensemble.c): splitmix64 of (seed, index), in [-1, 1)."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) * golden + index + np.uint64(1)
        for _ in range(2):
            z = z + golden
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-52 - 1.0


def _spread_states(K, q0, qd0, spread, seed):
    spread = float(spread)
    if not 0.0 <= spread <= 1e6:
        raise ValueError(f"spread: expected a number in [0, 1e6], got {spread!r}")
    if isinstance(seed, bool) or int(seed) != seed or not 0 <= seed <= 2**53:
        raise ValueError(f"seed: expected an integer in [0, 2^53], got {seed!r}")
    nq = q0.shape[0]
    index = np.arange(K * nq, dtype=np.uint64).reshape(K, nq)
    Q0 = q0 + spread * _uniform_pm1(int(seed), index)
    return Q0, np.tile(qd0, (K, 1))


_plugins = []  # the files of the plugins loaded, for the mbd commands run as subprocesses


def load_plugin(path):
    """load_plugin(path) -> list of str

    Loads a solver plugin (a shared library built against mbd_plugin.h; see
    docs/plugins.md) into this process and returns the names of the solvers it adds, which
    then serve every solver= argument, solvers() and recommend(). The plugin runs in this
    process: a faulty one can crash it. Raises mbdbench.Error naming the file and the fault
    (a missing file, no mbd_plugin_solvers, a wrong ABI, a name already taken, ...)."""
    path = os.path.abspath(os.fspath(path))
    before = solvers()
    _mbdbench._load_plugin(path)
    _plugins.append(path)
    return solvers()[len(before):]


def _mbd_command():
    """The mbd binary: $MBD, else the checkout's (beside python/), else mbd on PATH."""
    if os.environ.get("MBD"):
        return os.environ["MBD"]
    beside = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "mbd")
    if os.access(beside, os.X_OK):
        return os.path.abspath(beside)
    found = shutil.which("mbd")
    if not found:
        raise Error("recommend: the mbd command was not found (set MBD or put mbd on PATH)")
    return found


def recommend(model, batch=None, formulation=None, derivatives=False):
    """recommend(model, batch=None, formulation=None, derivatives=False) -> list of dict

    Times every solver on this model on this machine and ranks them, fastest first: one
    call on one thread, or with batch K, K states per batch on all threads. Runs
    `mbd recommend MODEL --json` as a subprocess (the timing core lives in the command, not
    the library), so it takes a few seconds; the mbd binary is $MBD, the checkout's, or
    mbd on PATH. Each entry: solver, variant, formulation, lanes, median_ns (per state),
    cv, ratio_to_fastest. derivatives: rank the methods of forward_derivatives instead (one
    call each; variant: the method's name), without batch or formulation."""
    if not isinstance(model, _Model):
        raise TypeError(f"model: expected an mbdbench.Model, got {type(model).__name__}")
    command = [_mbd_command(), "recommend", model.spec, "--json"]
    for plugin in _plugins:
        command += ["--plugin", plugin]
    if getattr(model, "floating_base", False):
        command.append("--floating-base")
    if batch is not None:
        if isinstance(batch, bool) or int(batch) != batch or not 1 <= batch <= 2**24:
            raise ValueError(f"batch: expected a number of states in [1, 2^24], got {batch!r}")
        command += ["--batch", str(int(batch))]
    if formulation is not None:
        command += ["--formulation", formulation]
    if derivatives:
        command.append("--derivatives")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Error(done.stderr.strip() or f"mbd recommend exited with {done.returncode}")
    return json.loads(done.stdout)["ranking"]


def load_results(path):
    """load_results(path) -> list of dict

    The rows ("benchmarks") of a Google Benchmark JSON file, as mbd-bench --json writes it
    (each with name, real_time, cpu_time, time_unit, iterations and mbd-bench's counters)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise ValueError(f"{path}: not a Google Benchmark JSON file (no 'benchmarks' list)")
    return data["benchmarks"]
