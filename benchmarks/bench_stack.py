"""The whole real stack: the control plane with every operator family, its start and memory.

`ControlPlane(operators=<every family>)` at each family's newest built release (what the
end-to-end tests run), against the control plane alone, in the same run. Its start covers the
programs, the CRDs (restored from the cache when an earlier start saved them, as in a test
session), the fake nodes, and every operator until it is ready. Memory is the resident set of
every process the stack runs (the operators' sandboxes included), read from /proc every half
second from before the start until a minute after it: the highest total seen, and the total
once it has settled. Skipped (one row saying why) when the control plane or an operator is
not built.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.bench_controlplane import _binaries

#: How long the memory is still sampled after the start (seconds).
SETTLE = 60.0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rpartition(")")[2].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _rss_of_descendants(root: int) -> float:
    """MiB resident in every process below `root` (not `root` itself)."""
    tree = _children()
    total, todo = 0, list(tree.get(root, []))
    while todo:
        pid = todo.pop()
        todo += tree.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


@contextmanager
def _sampled(samples: list[float]) -> Iterator[None]:
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append(_rss_of_descendants(os.getpid()))
            stop.wait(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield
    finally:
        stop.set()
        sampler.join()


def main() -> list[dict[str, str]]:
    from flarekit_testing import ControlPlane
    from flarekit_testing.controlplane._operator_runner import versions_for
    from flarekit_testing.controlplane._operators import FAMILIES, OperatorNotBuilt

    binaries = _binaries()
    if binaries is None:
        return [{"measurement": "whole stack start", "result": "skipped: not built"}]
    try:
        releases = versions_for(list(FAMILIES), None)
    except OperatorNotBuilt as exc:
        return [{"measurement": "whole stack start", "result": f"skipped: {exc}"}]
    rows: list[dict[str, str]] = []
    for label, operators in (("control plane alone (baseline)", {}), ("whole stack", releases)):
        samples: list[float] = []
        with (
            _sampled(samples),
            ControlPlane(
                releases=operators or None,
                operators=list(operators),
                binaries=binaries,
                start_timeout=900.0,
            ) as plane,
        ):
            started = plane.startup_seconds or 0.0
            time.sleep(SETTLE)
            settled = _rss_of_descendants(os.getpid())
        rows.append(
            {
                "measurement": f"{label}: start",
                "result": f"{started:.0f} s (CRDs {'restored' if plane.restored_state else 'installed'})",
            }
        )
        rows.append(
            {
                "measurement": f"{label}: memory",
                "result": f"peak {max(samples):.0f} MiB, settled {settled:.0f} MiB",
            }
        )
    rows.append(
        {
            "measurement": "whole stack: operators",
            "result": ", ".join(f"{family} {version}" for family, version in releases.items()),
        }
    )
    return rows
