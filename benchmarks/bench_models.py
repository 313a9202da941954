"""Generator speed and model import cost, each against a baseline measured in the same run.

* ``make generate`` from an empty cache (files copied from the mirror and parsed), again
  with a warm cache and ``--force`` (a real regeneration), and again with nothing changed
  (which must write nothing: every file's modification time is compared), in fresh
  processes; the no-op against ``python -c pass`` and against the real regeneration.
* ``from flarekit_models.ray.v1 import RayCluster`` in a fresh process against
  ``import pydantic`` and against the smallest possible pydantic model (one
  deferred class with one field), median of 5 runs each.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TIMED = "import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
IMPORTS = {
    "import pydantic": "import pydantic",
    "one deferred pydantic model": (
        "from pydantic import BaseModel, ConfigDict\n"
        "class A(BaseModel):\n"
        "    model_config = ConfigDict(defer_build=True)\n"
        "    x: int = 1"
    ),
    "from flarekit_models.ray.v1 import RayCluster": "from flarekit_models.ray.v1 import RayCluster",
}


def _time_in_fresh_process(code: str) -> float:
    script = "import time\nt = time.perf_counter()\n" + code + "\nprint(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def import_times(runs: int = 5) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in IMPORTS}
    for _ in range(runs):  # interleaved, so drift hits every variant alike
        for name, code in IMPORTS.items():
            samples[name].append(_time_in_fresh_process(code))
    return {name: statistics.median(values) for name, values in samples.items()}


def _files(root: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in sorted(root.rglob("*")) if p.is_file()}


def generation_times() -> tuple[dict[str, float], int]:
    """Seconds per run, and how many files the no-op run wrote or removed."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env["FLAREKIT_SCHEMA_CACHE"] = str(Path(tmp) / "cache")
        env["FLAREKIT_GENERATED"] = str(Path(tmp) / "out")
        command = [sys.executable, "-m", "flarekit_generator", "generate"]
        out: dict[str, float] = {}
        runs = [
            ("empty cache", []),
            ("warm cache, --force (a real regeneration)", ["--force"]),
            ("nothing changed (no-op)", []),
        ]
        before: dict[str, int] = {}
        for label, extra in runs:
            if label.startswith("nothing"):
                before = _files(Path(tmp) / "out")
            started = time.perf_counter()
            subprocess.run([*command, *extra], env=env, check=True, capture_output=True, cwd=ROOT)
            out[label] = time.perf_counter() - started
        after = _files(Path(tmp) / "out")
        changed = len(set(before.items()) ^ set(after.items()))
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        out["python -c pass"] = time.perf_counter() - started
        return out, changed


def main() -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    times, changed = generation_times()
    for label, seconds in times.items():
        rows.append((f"make generate, {label}" if label != "python -c pass" else label,
                     f"{seconds:.2f} s"))  # fmt: skip
    noop = times["nothing changed (no-op)"]
    rows.append(("no-op: files written or removed", str(changed)))
    rows.append(("no-op / python -c pass", f"{noop / times['python -c pass']:.1f}x"))
    real = times["warm cache, --force (a real regeneration)"]
    rows.append(("no-op / real regeneration", f"{noop / real:.3f}x"))
    times = import_times()
    base = times["import pydantic"]
    for name, seconds in times.items():
        rows.append((name, f"{seconds * 1000:.1f} ms = {seconds / base:.2f}x import pydantic"))
    floor = times["one deferred pydantic model"]
    ours = times["from flarekit_models.ray.v1 import RayCluster"]
    rows.append(("RayCluster import vs one-model floor", f"{ours / floor:.2f}x"))
    return rows


if __name__ == "__main__":
    for name, value in main():
        print(f"{name:55} {value}")
