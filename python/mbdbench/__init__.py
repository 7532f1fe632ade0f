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
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

# The extension first: its OpenBLAS (the OpenMP build, as mbd links) is then the one that
# the process loads, numpy's included; after numpy, numpy's choice (one libopenblas.so.0).
from ._mbdbench import Error, derivative_methods, solvers  # isort: skip
from ._mbdbench import Model as _Model  # isort: skip
from . import _mbdbench  # isort: skip

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import mujoco

__all__ = ["Model", "Error", "solvers", "derivative_methods", "load_plugin", "recommend",
           "load_results", "__version__"]

__version__: str = _mbdbench.__version__  # the library's mbd_version(), as `mbd --version`

Vector = npt.NDArray[np.float64]
Index = npt.NDArray[np.intp]

# The CLI's defaults (src/cmd_simulate.c, src/cli.h).
DEFAULT_RTOL = 1e-8
DEFAULT_ATOL = 1e-10
DEFAULT_BAUMGARTE = (10.0, 10.0)
MAX_TIME = 1e9
INITIAL_TOL = 1e-8      # |Phi|, |dPhi/dt| at the start of a simulation with loops
PROJECTION_TOL = 1e-12  # project_initial's Gauss-Newton tolerance
INTEGRATORS = ("rk4", "dopri5", "adams")


def _positive(name: str, value: float, maximum: float = MAX_TIME) -> float:
    value = float(value)
    if not 0.0 < value <= maximum:
        raise ValueError(f"{name}: expected a number in (0, {maximum:g}], got {value!r}")
    return value


class Model(_Model):
    __doc__ = _Model.__doc__
    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The C type loads the model in __new__ from the arguments as given, so a subclass
        # whose __init__ takes others could not work: final, as bool is.
        raise TypeError("mbdbench.Model cannot be subclassed: hold a Model in an attribute instead")

    @classmethod
    def from_string(cls, text: str, floating_base: bool = False,
                    name: str = "<string>") -> "Model":
        """from_string(text, floating_base=False, name='<string>') -> Model

        A model from the text of a model file: JSON, URDF or MJCF, told apart as files are
        (XML with root <mujoco>: MJCF, compiled by MuJoCo from memory; other XML: URDF;
        else JSON). name stands for the file in error messages and names the model where
        the text does not; an MJCF text's relative file names (meshes, <include>) resolve
        as for a file called name. floating_base as Model's. Pickles as its text; .spec
        is None (recommend needs a file). Raises mbdbench.Error as Model does."""
        model: Model = _mbdbench._from_text(cls, text, name, floating_base)
        return model

    @classmethod
    def from_mujoco(cls, mjmodel: "mujoco.MjModel", name: Optional[str] = None) -> "Model":
        """from_mujoco(mjmodel, name=None) -> Model

        A model from a compiled MuJoCo model (mujoco.MjModel, however it was made: from
        MJCF, MjSpec or a binary file), read as the MJCF reader reads what MuJoCo compiles
        from a file: the same elements refused or left out, q = qpos, joint names and order
        kept (docs/python.md: the free joint's velocities). Reads the MjModel's memory
        directly, so the mujoco package must be the MuJoCo this build links
        (mbdbench._mbdbench.mujoco_version); another version raises mbdbench.Error. name
        (default 'MjModel') stands for the file in messages and names the model where
        MuJoCo's has no name. Cannot be pickled (the MjModel can); .spec is None."""
        import mujoco  # here: importing mbdbench does not load MuJoCo's Python package

        if not isinstance(mjmodel, mujoco.MjModel):
            raise TypeError(f"mjmodel: expected a mujoco.MjModel, got {type(mjmodel).__name__}")
        linked = _mbdbench.mujoco_version
        if linked != mujoco.__version__:
            raise Error(f"from_mujoco: the mujoco package is {mujoco.__version__}, this build "
                        f"links MuJoCo {linked or '(none)'}: their MjModels differ")
        model: Model = _mbdbench._from_mujoco(cls, mjmodel._address, name or "MjModel")
        return model

    def permutation_to(self, names: Sequence[str],
                       convention: str = "mbd") -> Tuple[Index, Index]:
        """permutation_to(names, convention='mbd') -> (q_index, v_index)

        Index arrays (intp) that put this model's coordinates in another library's joint
        order: names are its moving joints' names in its order, and
        q_theirs = q[q_index], v_theirs = v[v_index] (for qd, qdd and tau alike); where
        names cover every moving joint, the inverse is q[q_index] = q_theirs. Each joint
        brings all its coordinates (a free joint nq 7, nv 6; a spherical one nq 4, nv 3).
        convention: 'mbd' keeps each joint's own coordinates in mbd's order (MuJoCo's
        too: qpos (x, y, z, qw, qx, qy, qz); its free joint's qvel differs by a rotation,
        see mujoco_velocity_map); 'pinocchio' orders them as Pinocchio does: quaternions
        (qx, qy, qz, qw), a free joint's velocity (v_O; w) instead of (w; v_O) (both in
        body axes), which makes its q, v, a and tau exactly a permutation of ours.
        Raises ValueError naming a joint that is unknown, fixed, repeated, or (for
        'pinocchio') of a type without that counterpart."""
        if convention not in CONVENTIONS:
            raise ValueError(f"convention: expected one of {', '.join(CONVENTIONS)}, "
                             f"got {convention!r}")
        moving = {j["name"]: j for j in self.joints if j["nv"] > 0}
        q_index: List[int] = []
        v_index: List[int] = []
        for name in _unique_names(names, moving, self.name):
            q, v = _coordinates(moving[name], convention)
            q_index += q
            v_index += v
        return np.array(q_index, dtype=np.intp), np.array(v_index, dtype=np.intp)

    def mujoco_velocity_map(self, q: npt.ArrayLike,
                            qd: npt.ArrayLike) -> Tuple[Vector, Vector]:
        """mujoco_velocity_map(q (nq,), qd (nv,)) -> (T (nv, nv), c (nv,)), float64

        MuJoCo's velocities and accelerations from ours, in this model's order, at q:
        qvel = T qd, qacc = T qdd + c, and forces qfrc = T tau (T is orthogonal:
        tau = T^T qfrc, H = T^T M T). T is the identity but at free joints, whose block
        maps mbd's (w; v_O), both in body axes, to MuJoCo's (R v_O; w), linear velocity
        in world axes (R the body's rotation, from q's quaternion (w, x, y, z)); c is zero
        but at a free joint's linear rows, R (w x v_O) (the derivative of R), in m/s^2."""
        q = np.asarray(q, dtype=np.float64)
        qd = np.asarray(qd, dtype=np.float64)
        if q.shape != (self.nq,) or qd.shape != (self.nv,):
            raise ValueError(f"q, qd: expected shapes ({self.nq},) and ({self.nv},), "
                             f"got {q.shape} and {qd.shape}")
        T, c = np.eye(self.nv), np.zeros(self.nv)
        for j in self.joints:
            if j["type"] == "free":
                a, v = j["q_index"], j["v_index"]
                R = _rotation(q[a + 3:a + 7])
                T[v:v + 6, v:v + 6] = np.block([[np.zeros((3, 3)), R],
                                                [np.eye(3), np.zeros((3, 3))]])
                c[v:v + 3] = R @ np.cross(qd[v:v + 3], qd[v + 3:v + 6])
        return T, c

    def _initial_state(self, q0: Optional[npt.ArrayLike],
                       qd0: Optional[npt.ArrayLike]) -> Tuple[Vector, Vector]:
        """q0 and qd0 as float64 copies, the neutral pose at rest where None (the CLI's)."""
        q0 = self.neutral() if q0 is None else np.array(q0, dtype=np.float64)
        qd0 = np.zeros(self.nv) if qd0 is None else np.array(qd0, dtype=np.float64)
        return q0, qd0

    def simulate(self, integrator: str, t1: float, dt: Optional[float] = None,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 solver: str = "dense", formulation: Optional[str] = None,
                 q0: Optional[npt.ArrayLike] = None, qd0: Optional[npt.ArrayLike] = None,
                 sample: Optional[float] = None,
                 baumgarte: Optional[Tuple[float, float]] = None,
                 project_initial: bool = False) -> Dict[str, Any]:
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

        Returns a dict of float64 arrays: t (T,) s, q (T, nq), qd (T, nv), kinetic and
        potential (T,) J, p (T, nv) in the momentum formulation, phi_norm and phid_norm (T,) with
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

    def _loop_options(self, solver: str, formulation: Optional[str],
                      baumgarte: Optional[Tuple[float, float]],
                      project_initial: bool) -> Tuple[float, float]:
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

    def _start_on_loops(self, q0: Vector, qd0: Vector,
                        project_initial: bool) -> Tuple[Vector, Vector]:
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

    def simulate_ensemble(self, t1: float, dt: float, runs: Optional[int] = None,
                          states: Optional[npt.ArrayLike] = None,
                          q0: Optional[npt.ArrayLike] = None,
                          qd0: Optional[npt.ArrayLike] = None, spread: Optional[float] = None,
                          seed: Optional[int] = None, sample: Optional[float] = None,
                          solver: str = "dense", threads: Optional[int] = None,
                          simd: bool = True) -> Dict[str, Any]:
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

        Returns a dict: t (T,) s, q (K, T, nq), qd (K, T, nv) float64, status (K,) intc
        (0: the run reached t1) and t_failed (K,) s (NaN where it did); a failed run's rows
        are NaN from its failure on, as in the CLI's CSV."""
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


CONVENTIONS = ("mbd", "pinocchio")


def _unique_names(names: Sequence[str], moving: Dict[str, Dict[str, Any]],
                  model: str) -> Sequence[str]:
    """names, checked: each a moving joint of the model, none twice."""
    if isinstance(names, str):
        raise TypeError("names: expected a sequence of joint names, got one str")
    seen = set()
    for name in names:
        if name not in moving:
            raise ValueError(f"names: {name!r} is not a moving joint of model {model} "
                             f"(its moving joints: {', '.join(moving)})")
        if name in seen:
            raise ValueError(f"names: joint {name!r} given twice")
        seen.add(name)
    return names


def _coordinates(joint: Dict[str, Any], convention: str) -> Tuple[List[int], List[int]]:
    """A joint's position and velocity indices in the convention's order."""
    q = list(range(joint["q_index"], joint["q_index"] + joint["nq"]))
    v = list(range(joint["v_index"], joint["v_index"] + joint["nv"]))
    if convention == "mbd" or joint["type"] in ("revolute", "prismatic"):
        return q, v
    if joint["type"] == "spherical":  # (w, x, y, z) -> Pinocchio's (x, y, z, w)
        return q[1:] + q[:1], v
    if joint["type"] == "free":  # and (w; v_O) -> (v_O; w)
        return q[:3] + q[4:] + q[3:4], v[3:] + v[:3]
    raise ValueError(f"names: joint {joint['name']!r} is {joint['type']}, which has no "
                     f"Pinocchio counterpart with the same coordinates")


def _rotation(quaternion: Vector) -> Vector:
    """The rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = quaternion
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _uniform_pm1(seed: int, index: npt.NDArray[np.uint64]) -> Vector:
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


def _spread_states(K: int, q0: Vector, qd0: Vector, spread: float,
                   seed: int) -> Tuple[Vector, Vector]:
    spread = float(spread)
    if not 0.0 <= spread <= 1e6:
        raise ValueError(f"spread: expected a number in [0, 1e6], got {spread!r}")
    if isinstance(seed, bool) or int(seed) != seed or not 0 <= seed <= 2**53:
        raise ValueError(f"seed: expected an integer in [0, 2^53], got {seed!r}")
    nq = q0.shape[0]
    index = np.arange(K * nq, dtype=np.uint64).reshape(K, nq)
    Q0 = q0 + spread * _uniform_pm1(int(seed), index)
    return Q0, np.tile(qd0, (K, 1))


_plugins: List[str] = []  # the files of the plugins loaded, for the mbd commands run as subprocesses


def load_plugin(path: Union[str, "os.PathLike[str]"]) -> List[str]:
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


def _mbd_command() -> str:
    """The mbd binary: $MBD, else the checkout's (beside python/), else the one that pip
    installed with the package (mbdbench/bin/), else mbd on PATH."""
    if os.environ.get("MBD"):
        return os.environ["MBD"]
    here = os.path.dirname(__file__)
    for beside in (os.path.join(here, os.pardir, os.pardir, "mbd"), os.path.join(here, "bin", "mbd")):
        if os.access(beside, os.X_OK):
            return os.path.abspath(beside)
    found = shutil.which("mbd")
    if not found:
        raise Error("recommend: the mbd command was not found (set MBD or put mbd on PATH)")
    return found


def recommend(model: _Model, batch: Optional[int] = None, formulation: Optional[str] = None,
              derivatives: bool = False) -> List[Dict[str, Any]]:
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
    if model.spec is None:
        raise Error(f"recommend: model {model.name} has no file or spec for mbd recommend "
                    "(made by from_string or from_mujoco): write it to a file and load that")
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
    ranking: List[Dict[str, Any]] = json.loads(done.stdout)["ranking"]
    return ranking


def load_results(path: Union[str, "os.PathLike[str]"]) -> List[Dict[str, Any]]:
    """load_results(path) -> list of dict

    The rows ("benchmarks") of a Google Benchmark JSON file, as mbd-bench --json writes it
    (each with name, real_time, cpu_time, time_unit, iterations and mbd-bench's counters)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise ValueError(f"{path}: not a Google Benchmark JSON file (no 'benchmarks' list)")
    rows: List[Dict[str, Any]] = data["benchmarks"]
    return rows
