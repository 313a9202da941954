"""Everything a user asks about a running Ray cluster, in one printable object.

Why: after `cluster.apply()` the next questions are "what did I get?" (resources per group,
image, Ray version), "where is it?" (the `ray://` address and the dashboard URL) and, for a
queued cluster, "why is it not running?" (the Kueue Workload's admission state). The answer
is read from the cluster (not from the local configuration), so it also describes clusters
made by someone else, and prints as text tables or as HTML in Jupyter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import flarekit.ray
from flarekit._tables import HtmlStatus, Row, html_table, text_table
from flarekit.cluster._config import ClusterConfiguration, WorkerGroup
from flarekit.cluster._status import ClusterStatus

__all__ = ["GROUP_HEADER", "ClusterDetails", "GroupResources", "group_rows", "ray_report"]

GROUP_HEADER = ("GROUP", "WORKERS", "MIN", "MAX", "CPU", "MEMORY", "DEVICES", "IMAGE")


@dataclass(frozen=True)
class GroupResources:
    """One pod group (the head, or a worker group): count, bounds and resources per pod."""

    name: str
    replicas: int
    min_replicas: int
    max_replicas: int
    cpu: str
    memory: str
    devices: str
    image: str

    def row(self) -> Row:
        return (
            self.name,
            self.replicas,
            self.min_replicas,
            self.max_replicas,
            self.cpu,
            self.memory,
            self.devices,
            self.image,
        )


def _span(requests: object, limits: object) -> str:
    """`request` when both agree, else `request-limit` (`-` for a missing side)."""
    low = "-" if requests is None else str(requests)
    high = "-" if limits is None else str(limits)
    return low if low == high else f"{low}-{high}"


def _devices(devices: dict[str, int | str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(devices.items())) or "-"


def group_rows(config: ClusterConfiguration) -> list[GroupResources]:
    """The head and every worker group of a configuration, as table rows."""
    rows = [
        GroupResources(
            "head",
            1,
            1,
            1,
            _span(config.head_cpu_requests, config.head_cpu_limits),
            _span(config.head_memory_requests, config.head_memory_limits),
            _devices(config.head_extended_resource_requests),
            config.effective_image,
        )
    ]
    for group in config.all_worker_groups():
        rows.append(_worker_row(config, group))
    return rows


def _worker_row(config: ClusterConfiguration, group: WorkerGroup) -> GroupResources:
    return GroupResources(
        group.name,
        group.num_workers,
        group.num_workers if group.min_workers is None else group.min_workers,
        group.num_workers if group.max_workers is None else group.max_workers,
        _span(group.cpu_requests, group.cpu_limits),
        _span(group.memory_requests, group.memory_limits),
        _devices(group.extended_resource_requests),
        group.image or config.effective_image,
    )


@dataclass(frozen=True)
class ClusterDetails(HtmlStatus):
    """A Ray cluster as the server describes it: status, addresses, queue and resources.

    `dashboard` is the dashboard URL, or the message saying why there is none and how to
    port-forward; `admission` is Kueue's admission state of the cluster's Workload (`None`
    when the cluster is not queued).
    """

    status: ClusterStatus
    kind: str
    ray_version: str | None
    image: str | None
    cluster_uri: str
    dashboard: str
    admission: str | None = None
    groups: list[GroupResources] = field(default_factory=list)
    #: What Ray itself reports of the cluster's resources (in use / total), when its
    #: dashboard answers at `dashboard`.
    ray_resources: str | None = None

    def _status_title(self) -> str:
        return f"Ray cluster {self.status.namespace}/{self.status.name} ({self.kind})"

    def _status_rows(self) -> Sequence[tuple[str, object]]:
        rows: list[tuple[str, object]] = list(self.status._status_rows())
        rows += [
            ("ray version", self.ray_version),
            ("image", self.image),
            ("cluster uri", self.cluster_uri),
            ("dashboard", self.dashboard),
        ]
        if self.admission is not None:
            rows.append(("admission", self.admission))
        if self.ray_resources is not None:
            rows.append(("ray reports", self.ray_resources))
        return rows

    def _group_table_rows(self) -> list[Row]:
        return [g.row() for g in self.groups]

    def __str__(self) -> str:
        summary = self.as_table()
        if not self.groups:
            return summary
        return summary + "\n\n" + text_table(self._group_table_rows(), header=GROUP_HEADER)

    def _repr_html_(self) -> str:
        summary = super()._repr_html_()
        if not self.groups:
            return summary
        return summary + html_table(self._group_table_rows(), header=GROUP_HEADER)


def _amount(name: str, value: float) -> str:
    if "memory" in name:
        return f"{value / 2**30:.1f}Gi"
    return f"{value:g}"


def ray_report(dashboard: str, timeout: float = 5.0) -> str | None:
    """What Ray reports of the cluster's resources at `dashboard` (``CPU 1/2 used, ...``),
    or None when it does not answer."""
    try:
        resources = flarekit.ray.RayJobClient(
            dashboard, timeout=timeout, retries=0
        ).cluster_resources()
    except (flarekit.ray.RayJobsError, OSError, ValueError):
        return None
    shown = [
        f"{name} {_amount(name, used)}/{_amount(name, total)}"
        for name, (used, total) in sorted(resources.items())
        if not name.startswith("node:")
    ]
    return (", ".join(shown) + " in use") if shown else "no node has reported yet"
