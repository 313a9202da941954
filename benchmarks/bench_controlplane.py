"""Starting the real control plane, against starting FakeCluster, in the same run.

Both serve the default upstream releases. ControlPlane's time covers etcd, kube-apiserver,
the controller-manager, the scheduler and KWOK, installing every CRD and waiting until they
are Established and the two fake nodes Ready, both when it installs the CRDs and when it
restores them from the state saved by an earlier start; FakeCluster's covers its store and
HTTPS server. Medians of a few starts; the resident memory of the control plane's processes is read
from /proc once it is up. Skipped (one row saying why) when the control plane is not built.
"""

from __future__ import annotations

import importlib.util
import shutil
import statistics
import sys
import time
from pathlib import Path

RUNS = 3
REPO = Path(__file__).resolve().parents[1]


def _binaries() -> Path | None:
    go = shutil.which("go")
    if go is None:
        return None
    spec = importlib.util.spec_from_file_location("cp_build", REPO / "controlplane" / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = build
    spec.loader.exec_module(build)
    folder = build.Module("controlplane", REPO / "controlplane").directory(build.go_version(go))
    return Path(folder) / "bin" if (Path(folder) / "bin" / ".complete").exists() else None


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> list[dict[str, str]]:
    from flarekit_testing import ControlPlane, FakeCluster

    binaries = _binaries()
    if binaries is None:
        return [{"measurement": "ControlPlane start", "result": "skipped: not built"}]
    fake: list[float] = []
    for _ in range(RUNS):
        started = time.perf_counter()
        with FakeCluster():
            fake.append(time.perf_counter() - started)
    installing: list[float] = []
    restored: list[float] = []
    memory = 0.0
    for reuse_state, times in ((False, installing), (True, restored)):
        for _ in range(RUNS):
            with ControlPlane(binaries=binaries, reuse_state=reuse_state) as plane:
                assert plane.startup_seconds is not None
                times.append(plane.startup_seconds)
                memory = sum(_rss_mib(pid) for pid in plane.pids.values())
    fake_s = statistics.median(fake)
    rows = [{"measurement": "FakeCluster start (baseline)", "result": f"{fake_s:.2f} s"}]
    for name, times in (
        ("ControlPlane start, installing the CRDs", installing),
        ("ControlPlane start, CRDs restored from the cache", restored),
    ):
        seconds = statistics.median(times)
        rows.append(
            {
                "measurement": name,
                "result": f"{seconds:.1f} s ({seconds / fake_s:.0f}x FakeCluster)",
            }
        )
    rows.append(
        {"measurement": "ControlPlane memory (all processes)", "result": f"{memory:.0f} MiB"}
    )
    return rows
