"""The real node's control group: one tree of its own, in every hierarchy, removed at stop.

The kubelet (with its `cgroupfs` driver) puts every pod and container under its cgroup root,
and runc creates each container's group there; containerd's shims leave their parent's
process group (they outlive containerd on purpose) but not its control group. So the node
gets one control group `/flarekit-node-<id>` in every mounted hierarchy (cgroup v1 controllers,
the named systemd one and the unified v2 one of a hybrid machine, or the single v2 tree):
the node's programs join `<root>/node` before they start, the kubelet's `cgroupRoot` is
`<root>`, and at stop every process found anywhere under `<root>` is killed, until none is
left, and the groups are removed, deepest first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

CGROUP_FS = Path("/sys/fs/cgroup")


class CgroupsUnavailable(RuntimeError):
    """This machine has no writable cgroup file system for the node."""


def hierarchies() -> list[Path]:
    """The mount point of every cgroup hierarchy (v1 controllers and named ones, and v2)."""
    found: list[Path] = []
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) >= 3 and fields[2] in ("cgroup", "cgroup2"):
                found.append(Path(fields[1]))
    return sorted(set(found))


class NodeCgroup:
    """`/<name>` in every hierarchy: created by `create()`, emptied and removed by
    `remove()`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.created: list[Path] = []

    @property
    def root(self) -> str:
        """The kubelet's `cgroupRoot`."""
        return f"/{self.name}"

    @property
    def daemons(self) -> str:
        """The group the node's own programs (containerd, kubelet...) run in."""
        return f"/{self.name}/node"

    def create(self) -> None:
        found = hierarchies()
        if not found:
            raise CgroupsUnavailable("no cgroup file system is mounted: the kubelet needs one")
        for hierarchy in found:
            for relative in (self.root, self.daemons):
                path = hierarchy / relative.lstrip("/")
                path.mkdir(exist_ok=True)
                if path not in self.created:
                    self.created.append(path)
                if (path / "cpuset.cpus").exists():
                    # A new cpuset group has no CPUs and no memory nodes: a process cannot
                    # join it until they are copied from its parent.
                    for name in ("cpuset.cpus", "cpuset.mems"):
                        (path / name).write_text((path.parent / name).read_text())

    def join_command(self) -> str:
        """Shell commands that move the shell that runs them into the daemons' group in
        every hierarchy (what the node's programs run before they start)."""
        files = " ".join(
            str(hierarchy / self.daemons.lstrip("/") / "cgroup.procs")
            for hierarchy in hierarchies()
        )
        return f"for f in {files}; do echo $$ > $f; done"

    def pids(self) -> set[int]:
        """Every process in any group of the tree, in any hierarchy."""
        found: set[int] = set()
        for hierarchy in hierarchies():
            top = hierarchy / self.name
            if not top.is_dir():
                continue
            for procs in top.rglob("cgroup.procs"):
                with contextlib.suppress(OSError):
                    found.update(int(p) for p in procs.read_text().split())
        return found

    def kill(self, timeout: float = 20.0) -> None:
        """SIGKILL every process in the tree until none is left (a process may fork while
        its siblings die; a frozen group is thawed first)."""
        deadline = time.monotonic() + timeout
        while True:
            self._thaw()
            pids = self.pids()
            if not pids:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"processes {sorted(pids)} in cgroup {self.root} survived SIGKILL"
                )
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    def _thaw(self) -> None:
        for hierarchy in hierarchies():
            top = hierarchy / self.name
            if not top.is_dir():
                continue
            for state in top.rglob("freezer.state"):
                with contextlib.suppress(OSError):
                    if state.read_text().strip() != "THAWED":
                        state.write_text("THAWED\n")

    def remove(self) -> None:
        """Kill what is left and remove every group of the tree, deepest first."""
        self.kill()
        errors: list[str] = []
        for hierarchy in hierarchies():
            top = hierarchy / self.name
            if not top.is_dir():
                continue
            groups = sorted(
                (p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True
            )
            for group in [*groups, top]:
                for _attempt in range(50):
                    try:
                        group.rmdir()
                        break
                    except FileNotFoundError:
                        break
                    except OSError:  # busy a moment after its last process died
                        time.sleep(0.02)
                else:
                    errors.append(str(group))
        self.created = []
        if errors:
            raise RuntimeError(f"could not remove cgroups: {', '.join(errors[:5])}")

    def exists(self) -> bool:
        return any((hierarchy / self.name).exists() for hierarchy in hierarchies())
