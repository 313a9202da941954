"""The supervisor of one local pod, as a container runtime's shim supervises a container.

Why: a pod's program starts processes of its own (torchrun its ranks, ``ray start`` a GCS,
a raylet, a dashboard and their workers), some of which leave their parent's process group
or outlive it. Ending a pod must end all of them, and a pod whose main process ends is over,
as a container is. So each local pod runs under this small process:

- it makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every process the pod
  starts stays its descendant even when its own parent exits, and reaps them;
- it puts itself into the pod's cgroup when one was made (``--cgroup``, see `_limits`), so
  the pod's CPU and memory limits hold for everything it starts;
- it runs the pod's argv as its child, with the same stdout and stderr (the pod's log);
- when the child exits, or on SIGTERM / SIGINT, or when the process that started it dies,
  it sends SIGTERM to every descendant, then SIGKILL after a grace period, and exits with the
  child's exit code (128 + the signal for a killed child, as a shell reports it).

``python -m flarekit_testing.local._shim [--cgroup DIR ...] [--grace SECONDS] -- ARGV...``;
standard library only, Linux only (elsewhere it runs the child without subreaping).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["descendants", "main"]

_PR_SET_CHILD_SUBREAPER = 36


def _subreaper() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _children_map(zombies: bool = False) -> dict[int, list[int]]:
    """Parent pid -> child pids of every process this user can see (from /proc); exited
    processes not yet reaped (zombies) only when asked for."""
    out: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) < 2 or (fields[0] == "Z" and not zombies):
            continue
        with contextlib.suppress(ValueError):
            out.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return out


def descendants(pid: int) -> list[int]:
    """Every live process below `pid`, children first."""
    children = _children_map()
    found: list[int] = []
    queue = list(children.get(pid, []))
    while queue:
        current = queue.pop(0)
        if current in found:
            continue
        found.append(current)
        queue.extend(children.get(current, []))
    return found


def _signal_all(sig: int) -> None:
    for pid in descendants(os.getpid()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _reap(keep: int = 0) -> None:
    """Collect the exit status of ended children (orphans re-parented here), except `keep`
    (the pod's main process, whose status `Popen` collects)."""
    for pid in _children_map(zombies=True).get(os.getpid(), []):
        if pid != keep:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def _end_everything(grace: float, keep: int) -> None:
    """SIGTERM to every descendant, SIGKILL to those still there after `grace` seconds
    (`keep`: the main child, left unreaped for `Popen`)."""
    _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while descendants(os.getpid()) and time.monotonic() < deadline:
        _reap(keep)
        time.sleep(0.05)
    while descendants(os.getpid()):
        _signal_all(signal.SIGKILL)
        _reap(keep)
        time.sleep(0.02)
    _reap(keep)


def _join_cgroups(folders: list[str]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            (Path(folder) / "cgroup.procs").write_text(f"{os.getpid()}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flarekit_testing.local._shim")
    parser.add_argument("--cgroup", action="append", default=[], help="cgroup folder to join")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds between TERM and KILL")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    parent = os.getppid()
    _subreaper()
    _join_cgroups(args.cgroup)
    stopping = {"signal": 0}

    def stop(signum: int, _frame: object) -> None:
        stopping["signal"] = signum

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    try:
        child = subprocess.Popen(command)  # the pod's own program, run on purpose
    except OSError as exc:
        print(
            f"[flarekit local kubelet] cannot start {command[0]!r}: {exc}",
            file=sys.stderr,
            flush=True,
        )
        return 127
    code: int | None = None
    while code is None:
        code = child.poll()
        if code is None and (stopping["signal"] or os.getppid() != parent):
            break
        _reap(keep=child.pid)
        time.sleep(0.05)
    _end_everything(args.grace, child.pid)
    if code is None:
        code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
