"""Import time and install size: `import flarekit` vs `import codeflare_sdk`, fresh processes.

Each round starts two fresh interpreters, one per package, in alternating order (so neither
always runs with a warmer disk cache), and records the wall time of the whole process and the
package's cumulative import time from ``python -X importtime``; the results are medians of
ROUNDS rounds, after one run of each that compiles the bytecode (cached as users have it, see
``baseline_tree.bytecode_env``). codeflare-sdk pins Ray and pulls in about a hundred distributions, so it lives
in its own virtual environment under ``.cache/bench-codeflare/``, made on the first run with
``pip install codeflare-sdk`` (the newest release pip finds for this Python). If that install
fails, the rows say so and no ratio is printed. The install sizes are counted too: every
distribution in codeflare-sdk's environment, and the runtime requirements of flarekit
followed recursively (no extras), as ``pip install flarekit`` would pull them in.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.baseline_tree import bytecode_env

ROUNDS = 5
ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".cache" / "bench-codeflare"
MARKER = VENV / ".installed"
VENV_PYTHON = VENV / "bin" / "python"
#: Tools every virtual environment has, which are not codeflare-sdk's dependencies.
_VENV_TOOLS = {"pip", "setuptools", "wheel"}
_IMPORTTIME = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|\s*(\S+)\s*$")

Row = dict[str, Any]


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def ensure_codeflare() -> tuple[str | None, str]:
    """(codeflare-sdk version, "") once its environment exists; (None, why) if it cannot."""
    if MARKER.is_file() and VENV_PYTHON.is_file():
        return MARKER.read_text().strip(), ""
    _log(f"bench_import: installing codeflare-sdk into {VENV} (first run only; large)")
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(VENV)],
        [str(VENV_PYTHON), "-m", "pip", "install", "--quiet", "codeflare-sdk"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            why = lines[-1] if lines else f"exit status {done.returncode}"
            return None, f"`{' '.join(step[-3:])}` failed: {why}"
    version = _venv_version("codeflare-sdk")
    MARKER.write_text(version + "\n")
    return version, ""


def _venv_version(name: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({name!r}))"
    done = subprocess.run([str(VENV_PYTHON), "-c", code], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def venv_distributions() -> list[str]:
    """Every distribution installed in codeflare-sdk's environment (pip and friends aside)."""
    code = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps(sorted({d.metadata['Name'].lower() for d in m.distributions()})))"
    )
    done = subprocess.run([str(VENV_PYTHON), "-c", code], capture_output=True, text=True)
    names: list[str] = json.loads(done.stdout or "[]")
    return [n for n in names if n not in _VENV_TOOLS]


def runtime_closure(name: str) -> list[str]:
    """`name` and everything its runtime requirements pull in, following the extras each
    requirement asks for and evaluating markers for this interpreter (no extras of `name`)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: dict[str, set[str]] = {}
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset())]
    while todo:
        dist_name, extras = todo.pop()
        key = str(canonicalize_name(dist_name))
        known = seen.get(key)
        if known is not None and extras <= known:
            continue
        seen[key] = (known or set()) | set(extras)
        try:
            requires = metadata.requires(dist_name) or []
        except metadata.PackageNotFoundError:
            continue  # required but not installed here: counted, not followed
        for text in requires:
            req = Requirement(text)
            active = ["", *sorted(extras)]
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in active):
                todo.append((req.name, frozenset(req.extras)))
    return sorted(seen)


def _run(python: str, module: str) -> tuple[float, float]:
    """(wall seconds of the process, cumulative import seconds of `module`)."""
    start = time.perf_counter()
    done = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=False,
        env=bytecode_env(),
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"import {module} failed with {python}: {last}")
    cumulative = None
    for line in done.stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match and match.group(3) == module:
            cumulative = int(match.group(2)) / 1e6
    if cumulative is None:
        raise RuntimeError(f"no -X importtime line for {module}")
    return wall, cumulative


#: What a user's first cell loads: the package and the facade's main names.
FACADE = "from flarekit import Cluster, ClusterConfiguration, RayJob, TrainJob, list_queues"


def _wall(python: str, code: str) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-c", code], check=True, capture_output=True, env=bytecode_env())
    return time.perf_counter() - start


def _imports_ray() -> bool:
    code = "import sys, flarekit; flarekit.Cluster; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return done.stdout.strip() == "True"


def main() -> list[Row]:
    ours = runtime_closure("flarekit")
    rows: list[Row] = [
        {"measurement": "pip install flarekit: distributions", "result": str(len(ours))},
        {"measurement": "flarekit imports ray", "result": str(_imports_ray())},
    ]
    version, why = ensure_codeflare()
    if version is None:
        rows.append({"measurement": "codeflare-sdk", "result": f"NOT MEASURED: {why}"})
        alone = [_run(sys.executable, "flarekit") for _ in range(ROUNDS + 1)][1:]
        cumulative = statistics.median(c for _, c in alone)
        rows.append(
            {"measurement": "import flarekit: importtime (s)", "result": f"{cumulative:.4f}"}
        )
        return rows
    theirs = venv_distributions()
    for module, python in [("flarekit", sys.executable), ("codeflare_sdk", str(VENV_PYTHON))]:
        _run(python, module)  # compiles and caches the bytecode both sides then read
    _wall(sys.executable, FACADE)
    samples: dict[str, list[tuple[float, float]]] = {"flarekit": [], "codeflare_sdk": []}
    facade: list[float] = []
    for i in range(ROUNDS):
        order = [("flarekit", sys.executable), ("codeflare_sdk", str(VENV_PYTHON))]
        for module, python in order if i % 2 == 0 else reversed(order):
            samples[module].append(_run(python, module))
        facade.append(_wall(sys.executable, FACADE))
    med = {
        module: (
            statistics.median(w for w, _ in runs),
            statistics.median(c for _, c in runs),
        )
        for module, runs in samples.items()
    }
    (fw, fc), (cw, cc) = med["flarekit"], med["codeflare_sdk"]
    fm = statistics.median(facade)
    rows += [
        {"measurement": f"codeflare-sdk {version}: distributions", "result": str(len(theirs))},
        {"measurement": "codeflare-sdk environment has ray", "result": str("ray" in theirs)},
        {
            "measurement": f"import flarekit: importtime (median of {ROUNDS}, s)",
            "result": f"{fc:.4f}",
        },
        {
            "measurement": f"import codeflare_sdk: importtime (median of {ROUNDS}, s)",
            "result": f"{cc:.4f}",
        },
        {"measurement": "importtime ratio flarekit / codeflare_sdk", "result": f"{fc / cc:.4f}"},
        {"measurement": "process wall time: flarekit (s)", "result": f"{fw:.3f}"},
        {"measurement": "process wall time: codeflare_sdk (s)", "result": f"{cw:.3f}"},
        {"measurement": "wall time ratio flarekit / codeflare_sdk", "result": f"{fw / cw:.4f}"},
        {"measurement": "process wall time: flarekit + facade names (s)", "result": f"{fm:.3f}"},
        {"measurement": "wall time ratio facade / codeflare_sdk", "result": f"{fm / cw:.4f}"},
    ]
    return rows
