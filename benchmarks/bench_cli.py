"""The command line's first call: ``flarekit cluster render -f`` and ``flarekit version``.

A command-line tool is judged by how long one command takes from a cold process. Each round
starts a fresh interpreter per case, in alternating order, and records its wall time and CPU
time; the results are medians of ROUNDS rounds, after a warm-up that compiles the bytecode
(cached as users have it). Anchors measured in the same run: ``python -c pass`` (the
interpreter alone) and the render of the baseline commit (``baseline_tree``, default
7551104), which built the RayCluster as a dict and validated it once. Per command, one more
run counts what it loaded: modules imported, pydantic model classes created, and validators
built (classes whose schema was generated), and ``-X importtime``'s total.

The baseline commit's ``flarekit.cli._app`` imports ``flarekit.cli._generate``, which that
same commit deleted (its tree cannot run ``flarekit`` as committed); its driver registers an
empty ``generate`` command module in its place, which the render never uses.
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.baseline_tree import BaselineError, Tree, baseline_rev, prepare, working_tree

ROUNDS = int(os.environ.get("FLAREKIT_BENCH_CLI_ROUNDS", "15"))
CLUSTER_YAML = (
    "name: demo\nnum_workers: 2\nworker_memory_requests: 4Gi\nworker_memory_limits: 4Gi\n"
)
#: What the ``flarekit`` console script runs.
DRIVER = "import sys\nfrom flarekit.cli import main\nsys.exit(main())\n"
#: The same for the baseline commit (see the module docstring).
BASELINE_DRIVER = (
    "import sys, types\n"
    "stub = types.ModuleType('flarekit.cli._generate')\n"
    "stub.register = lambda commands: None\n"
    "sys.modules['flarekit.cli._generate'] = stub\n" + DRIVER
)
#: Printed at exit by the census run: what the process loaded and built.
CENSUS = """
import atexit, json, sys
def _census():
    found = {"modules": len(sys.modules), "models": 0, "built": 0}
    if "pydantic" in sys.modules:
        from pydantic import BaseModel
        todo, seen = list(BaseModel.__subclasses__()), set()
        while todo:
            cls = todo.pop()
            if cls in seen:
                continue
            seen.add(cls)
            todo += cls.__subclasses__()
            if cls.__module__.startswith(("flarekit", "flarekit_models")):
                found["models"] += 1
                found["built"] += bool(cls.__dict__.get("__pydantic_complete__"))
    sys.stderr.write("CENSUS " + json.dumps(found) + "\\n")
atexit.register(_census)
"""
_IMPORTTIME = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|")

Row = dict[str, str]


def _run(tree: Tree, code: str, args: list[str], *flags: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stderr) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *flags, "-c", code, *args],
        env=tree.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"{tree.label} {' '.join(args) or code!r} failed: {last}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, done.stderr


def _census(tree: Tree, driver: str, args: list[str]) -> dict[str, Any]:
    _, _, err = _run(tree, CENSUS + driver, args, "-X", "importtime")
    found: dict[str, Any] = {}
    total = 0
    for line in err.splitlines():
        if line.startswith("CENSUS "):
            found = json.loads(line[len("CENSUS ") :])
        match = _IMPORTTIME.match(line)
        if match:
            total += int(match.group(1))
    found["importtime_ms"] = total / 1000
    return found


def main() -> list[Row]:
    current = working_tree()
    rev = baseline_rev()
    rows: list[Row] = []
    try:
        baseline: Tree | None = prepare(rev)
    except BaselineError as why:
        baseline = None
        rows.append({"measurement": f"baseline {rev}", "result": f"NOT MEASURED: {why}"})
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "cluster.yaml"
        config.write_text(CLUSTER_YAML, encoding="utf-8")
        render = ["cluster", "render", "-f", str(config)]
        cases: dict[str, tuple[Tree, str, list[str]]] = {
            "python -c pass": (current, "pass", []),
            "flarekit cluster render -f cluster.yaml": (current, DRIVER, render),
            "flarekit version --client": (current, DRIVER, ["version", "--client"]),
            "flarekit --version": (current, DRIVER, ["--version"]),
        }
        if baseline is not None:
            cases["baseline render (dict-based, validated once)"] = (
                baseline,
                BASELINE_DRIVER,
                render,
            )
        for tree, code, args in cases.values():
            for _ in range(2):
                _run(tree, code, args)  # compiles and caches the bytecode
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        names = list(cases)
        for i in range(ROUNDS):
            for name in names if i % 2 == 0 else reversed(names):
                tree, code, args = cases[name]
                samples[name].append(_run(tree, code, args)[:2])
        wall = {n: statistics.median(w for w, _ in s) for n, s in samples.items()}
        cpu = {n: statistics.median(c for _, c in s) for n, s in samples.items()}
        for name in names:
            rows.append(
                {
                    "measurement": f"{name}: wall / CPU ms (median of {ROUNDS})",
                    "result": f"{wall[name] * 1e3:.0f} / {cpu[name] * 1e3:.0f}",
                }
            )
        anchor = "python -c pass"
        for name in names[1:]:
            rows.append(
                {
                    "measurement": f"{name} / python -c pass (wall; CPU)",
                    "result": f"{wall[name] / wall[anchor]:.1f}x; {cpu[name] / cpu[anchor]:.1f}x",
                }
            )
        base = "baseline render (dict-based, validated once)"
        if baseline is not None:
            ours = "flarekit cluster render -f cluster.yaml"
            rows.append(
                {
                    "measurement": f"render / baseline {baseline.label} render (wall; CPU)",
                    "result": f"{wall[ours] / wall[base]:.2f}x; {cpu[ours] / cpu[base]:.2f}x",
                }
            )
        for name in names[1:]:
            tree, code, args = cases[name]
            driver = BASELINE_DRIVER if name == base else DRIVER
            found = _census(tree, driver, args)
            rows.append(
                {
                    "measurement": f"{name}: modules / model classes / validators built / "
                    "importtime ms",
                    "result": f"{found.get('modules', '?')} / {found.get('models', '?')} / "
                    f"{found.get('built', '?')} / {found['importtime_ms']:.0f}",
                }
            )
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(main()))
