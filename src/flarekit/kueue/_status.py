"""Queues as a user sees them: which LocalQueues there are, how busy, and how much is left.

Why: before submitting, people ask "which queue can I use, and is it full?". This reads
LocalQueues (their pending and admitted Workloads, their Active condition) and their
ClusterQueues (quota per flavor and resource, and how much of it is in use) in one pass, and
shows them as a text table or, in Jupyter, as HTML. Missing status (a queue Kueue has not
reconciled yet) shows as unknown rather than failing, and so does a ClusterQueue the user
may not read (ClusterQueues are cluster-scoped; many users may only read their namespace).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import flarekit_models.kueue
from flarekit._tables import HtmlStatus, html_table, text_table
from flarekit.client import ALL_NAMESPACES, Forbidden, NotFound
from flarekit.kueue._models import kueue_model
from flarekit.kueue._queues import DEFAULT_QUEUE_ANNOTATION, DEFAULT_QUEUE_NAME

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit.kueue._models import ClusterQueue, LocalQueue
    from flarekit_models.meta.v1 import Condition

__all__ = ["QueueList", "QueueStatus", "ResourceUsage", "list_queues", "queue_status"]

_HEADER = ("NAMESPACE", "LOCALQUEUE", "CLUSTERQUEUE", "ACTIVE", "PENDING", "ADMITTED", "USAGE")


@dataclass(frozen=True)
class ResourceUsage:
    """One resource of one flavor: the ClusterQueue's nominal `quota`, how much of it its
    admitted Workloads use (`used`, all its LocalQueues together; `borrowed` from the cohort),
    and how much this LocalQueue's Workloads use (`queue_used`). None: not known."""

    flavor: str
    resource: str
    quota: str | None = None
    used: str | None = None
    borrowed: str | None = None
    queue_used: str | None = None

    def __str__(self) -> str:
        used = self.used if self.used is not None else self.queue_used
        return f"{self.flavor}/{self.resource} {used or '0'}/{self.quota or '?'}"


@dataclass(frozen=True)
class QueueStatus(HtmlStatus):
    """One LocalQueue and what it sends work to."""

    name: str
    namespace: str
    cluster_queue: str
    active: bool | None = None
    message: str = ""
    pending: int | None = None
    admitted: int | None = None
    reserving: int | None = None
    default: bool = False
    usage: tuple[ResourceUsage, ...] = field(default_factory=tuple)

    def usage_text(self) -> str:
        return ", ".join(str(u) for u in self.usage) or "-"

    def row(self) -> tuple[object, ...]:
        return (
            self.namespace,
            self.name + (" (default)" if self.default else ""),
            self.cluster_queue,
            self.active,
            self.pending,
            self.admitted,
            self.usage_text(),
        )

    def _status_title(self) -> str:
        return f"LocalQueue {self.namespace}/{self.name}"

    def _status_rows(self) -> list[tuple[str, object]]:
        rows: list[tuple[str, object]] = [
            ("ClusterQueue", self.cluster_queue),
            ("Active", self.active),
        ]
        if self.message:
            rows.append(("Message", self.message))
        rows += [
            ("Pending", self.pending),
            ("Admitted", self.admitted),
            ("Default", self.default),
        ]
        rows += [
            (
                f"{u.flavor} {u.resource}",
                f"{u.used or '0'} of {u.quota or '?'} used"
                + (f" ({u.queue_used} by this queue)" if u.queue_used else ""),
            )
            for u in self.usage
        ]
        return rows

    def __str__(self) -> str:
        return self.as_table()


class QueueList(list[QueueStatus]):
    """The result of `list_queues`: a list, printed as a table (`table()`, HTML in Jupyter).

    `namespace` is where it looked (``"*"``: every namespace), so that an empty listing says
    where there was nothing."""

    def __init__(self, items: Iterable[QueueStatus] = (), *, namespace: str = "") -> None:
        super().__init__(items)
        self.namespace = namespace

    def table(self) -> str:
        if not self:
            if self.namespace == ALL_NAMESPACES:
                return "No LocalQueues in any namespace."
            return (
                f"No LocalQueues in namespace {self.namespace!r}."
                if self.namespace
                else ("No LocalQueues found.")
            )
        return text_table([q.row() for q in self], header=_HEADER)

    def _repr_html_(self) -> str:
        return html_table([q.row() for q in self], header=_HEADER, title="Kueue LocalQueues")

    def __str__(self) -> str:
        return self.table()


# -- reading ----------------------------------------------------------------------------------


class _Amount(Protocol):
    """One resource of a flavor in a usage list (either Kueue version, either queue kind)."""

    @property
    def name(self) -> str: ...
    @property
    def total(self) -> int | str | None: ...


class _ClusterAmount(_Amount, Protocol):
    """One resource of a flavor in a ClusterQueue's usage: borrowed from the cohort too."""

    @property
    def borrowed(self) -> int | str | None: ...


class _FlavorAmounts(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def resources(self) -> Sequence[_Amount]: ...


def _condition(obj: LocalQueue, type_: str) -> Condition | None:
    conditions = (obj.status.conditions or []) if obj.status is not None else []
    return next((c for c in conditions if c.type == type_), None)


def _usage_map(entries: Sequence[_FlavorAmounts] | None) -> dict[tuple[str, str], _Amount]:
    return {(str(f.name), str(r.name)): r for f in entries or [] for r in f.resources or []}


def _text(value: int | str | None) -> str | None:
    return None if value is None else str(value)


def _local_usage(local: LocalQueue) -> Sequence[_FlavorAmounts] | None:
    status = local.status
    if status is None:
        return None
    # v1beta1 calls it flavorUsage, v1beta2 flavorsUsage
    if isinstance(status, flarekit_models.kueue.v1beta1.LocalQueueStatus):
        return status.flavor_usage
    return status.flavors_usage


def _usage(local: LocalQueue, cluster: ClusterQueue | None) -> tuple[ResourceUsage, ...]:
    local_used = _usage_map(_local_usage(local))
    cluster_status = cluster.status if cluster is not None else None
    cluster_flavors = (cluster_status.flavors_usage or []) if cluster_status is not None else []
    cq_used: dict[tuple[str, str], _ClusterAmount] = {
        (str(f.name), str(r.name)): r for f in cluster_flavors for r in f.resources or []
    }
    keys: list[tuple[str, str]] = []
    quotas: dict[tuple[str, str], str] = {}
    groups = cluster.spec.resource_groups if cluster is not None and cluster.spec else None
    for group in groups or []:
        for flavor in group.flavors or []:
            for resource in flavor.resources or []:
                key = (str(flavor.name), str(resource.name))
                keys.append(key)
                quotas[key] = str(resource.nominal_quota)
    keys += [k for k in [*cq_used, *local_used] if k not in keys]
    return tuple(
        ResourceUsage(
            flavor,
            resource,
            quota=quotas.get((flavor, resource)),
            used=_text(cq_used[key].total) if key in cq_used else None,
            borrowed=_text(cq_used[key].borrowed) if key in cq_used else None,
            queue_used=_text(local_used[key].total) if key in local_used else None,
        )
        for key in keys
        for flavor, resource in (key,)
    )


def _status_of(local: LocalQueue, cluster: ClusterQueue | None) -> QueueStatus:
    meta = local.metadata
    name = str(meta.name if meta is not None else "")
    status = local.status
    active = _condition(local, "Active")
    annotations = (meta.annotations if meta is not None else None) or {}
    marked = annotations.get(DEFAULT_QUEUE_ANNOTATION, "").lower() == "true"
    return QueueStatus(
        name=name,
        namespace=str((meta.namespace if meta is not None else None) or ""),
        cluster_queue=str((local.spec.cluster_queue if local.spec is not None else None) or ""),
        active=None if active is None else str(active.status) == "True",
        message="" if active is None or str(active.status) == "True" else str(active.message),
        pending=status.pending_workloads if status is not None else None,
        admitted=status.admitted_workloads if status is not None else None,
        reserving=status.reserving_workloads if status is not None else None,
        default=marked or name == DEFAULT_QUEUE_NAME,
        usage=_usage(local, cluster),
    )


def _name(obj: LocalQueue | ClusterQueue) -> str:
    return str((obj.metadata.name if obj.metadata is not None else None) or "")


def _cluster_queues(client: Client, names: set[str]) -> dict[str, ClusterQueue]:
    """The named ClusterQueues the user may read (one list, else one get each)."""
    kind = kueue_model(client, "ClusterQueue")
    try:
        return {_name(q): q for q in client.list(kind) if _name(q) in names}
    except Forbidden:
        pass
    found: dict[str, ClusterQueue] = {}
    for name in sorted(names):
        try:
            found[name] = client.get(kind, name)
        except (Forbidden, NotFound):
            continue
    return found


def list_queues(client: Client, namespace: str | None = None) -> QueueList:
    """The LocalQueues of `namespace` (the client's by default; ``"*"`` for every namespace)
    with their ClusterQueues' quota and usage, sorted by namespace and name."""
    kind = kueue_model(client, "LocalQueue")
    where = namespace or client.namespace or "default"
    locals_ = sorted(
        client.list(kind, namespace=where),
        key=lambda q: (str(q.metadata.namespace if q.metadata else None), _name(q)),
    )
    queues = [(q, q.spec.cluster_queue if q.spec is not None else None) for q in locals_]
    wanted = {str(cq) for _, cq in queues if cq}
    clusters = _cluster_queues(client, wanted) if wanted else {}
    return QueueList(
        (_status_of(q, clusters.get(str(cq or ""))) for q, cq in queues), namespace=where
    )


def queue_status(client: Client, name: str, namespace: str | None = None) -> QueueStatus:
    """One LocalQueue (`NotFound` if it does not exist) with its ClusterQueue's quota."""
    if namespace == ALL_NAMESPACES:
        raise ValueError("queue_status needs one namespace, not all of them")
    local = client.get(kueue_model(client, "LocalQueue"), name, namespace=namespace)
    wanted = local.spec.cluster_queue if local.spec is not None else None
    clusters = _cluster_queues(client, {str(wanted)}) if wanted else {}
    return _status_of(local, clusters.get(str(wanted)))
