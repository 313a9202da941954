"""CPU and memory limits for local pods, where the operating system lets this process set them.

Why: on a cluster a pod gets what it asks for and no more; a training function that runs
away with the laptop's memory should meet the same wall as in its container. A pod's limit
(or, without one, its request) becomes a Linux cgroup limit: ``memory.max`` and ``cpu.max``
(cgroup v2) or ``memory.limit_in_bytes`` and ``cpu.cfs_quota_us`` (cgroup v1), in a cgroup
made for the pod under this process's own, which the pod's supervisor joins before it starts
the pod's program (`_shim`). That needs a cgroup this user may write: root, or a delegated
cgroup v2 subtree (``systemd-run --user --scope -p Delegate=yes ...``). Elsewhere (macOS, a
desktop session without delegation) nothing is enforced, and `Limits.note` says why: the
kubelet records it as an Event on the pod.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

__all__ = ["Limits", "limits_for"]

_ROOT = Path("/sys/fs/cgroup")
_PERIOD = 100_000  # microseconds, the kernel's default CFS period


@dataclass
class Limits:
    """The cgroups made for one pod (empty when none could be), and why not."""

    folders: list[Path] = field(default_factory=list)
    note: str = ""

    def remove(self) -> None:
        """Remove the pod's cgroups once its processes are gone."""
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()
        self.folders = []


def _own_cgroups() -> dict[str, str]:
    """Controller (``""`` for cgroup v2) -> this process's cgroup path."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            out[controller] = path
    return out


def _make(parent: Path, name: str) -> Path:
    folder = parent / name
    folder.mkdir()
    return folder


def _v2(name: str, cpu: Fraction | None, memory: int | None) -> Limits:
    parent = _ROOT / _own_cgroups().get("", "/").lstrip("/")
    available = (parent / "cgroup.controllers").read_text().split()
    missing = [c for c, v in (("cpu", cpu), ("memory", memory)) if v and c not in available]
    if missing:
        return Limits(note=f"cgroup v2 controllers {missing} are not delegated to {parent}")
    folder = _make(parent, name)
    try:
        if memory:
            (folder / "memory.max").write_text(str(memory))
        if cpu:
            (folder / "cpu.max").write_text(f"{max(1000, int(cpu * _PERIOD))} {_PERIOD}")
    except OSError:
        folder.rmdir()
        raise
    return Limits([folder])


def _v1(name: str, cpu: Fraction | None, memory: int | None) -> Limits:
    own = _own_cgroups()
    made: list[Path] = []
    try:
        if memory:
            folder = _make(_ROOT / "memory" / own.get("memory", "/").lstrip("/"), name)
            made.append(folder)
            (folder / "memory.limit_in_bytes").write_text(str(memory))
        if cpu:
            folder = _make(_ROOT / "cpu" / own.get("cpu", "/").lstrip("/"), name)
            made.append(folder)
            (folder / "cpu.cfs_period_us").write_text(str(_PERIOD))
            (folder / "cpu.cfs_quota_us").write_text(str(max(1000, int(cpu * _PERIOD))))
    except OSError:
        Limits(made).remove()
        raise
    return Limits(made)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:80]


def limits_for(pod: str, cpu: Fraction | None, memory: int | None) -> Limits:
    """cgroups limiting a pod to `cpu` cores and `memory` bytes (None: no limit), or an empty
    `Limits` saying why they could not be made."""
    if not cpu and not memory:
        return Limits()
    if not _ROOT.is_dir() or os.name != "posix":
        return Limits(note="this system has no Linux cgroups: CPU and memory are not limited")
    name = f"flarekit-{_safe(pod)}-{secrets.token_hex(3)}"
    try:
        if (_ROOT / "cgroup.controllers").exists():
            return _v2(name, cpu, memory)
        return _v1(name, cpu, memory)
    except OSError as exc:
        return Limits(
            note=f"CPU and memory limits are not enforced: this user cannot create cgroups "
            f"({exc.strerror or exc})"
        )
