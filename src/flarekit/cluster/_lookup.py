"""Finding Ray clusters that already exist: by name, all of them, or those waiting in a queue.

Why: clusters outlive notebooks, and many are made by someone else (a colleague, a pipeline,
`kubectl apply`). `get_cluster` attaches to one and rebuilds its `ClusterConfiguration` from
the stored object (also when the RayCluster sits inside an AppWrapper, or when the AppWrapper
is still queued and has not made its RayCluster yet). AppWrappers are read in the version the
server serves: v1beta2, or the legacy MCAD's v1beta1. The listings pair each AppWrapper with
the RayCluster it made, so a wrapped cluster shows up once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import flarekit.client
from flarekit._json import JsonObject, JsonValue
from flarekit._objects import metadata_of, name_of
from flarekit._tables import html_table, text_table
from flarekit.client import NotFound
from flarekit.cluster._cluster import Cluster
from flarekit.cluster._read import from_raycluster
from flarekit.cluster._status import (
    ClusterState,
    ClusterStatus,
    cluster_status,
    owning_appwrapper,
)
from flarekit.cluster._wrapper import appwrapper_kind, wrapped_templates
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models import KubeResource

R = TypeVar("R", bound="KubeResource")

__all__ = [
    "ClusterList",
    "FoundCluster",
    "find_clusters",
    "get_cluster",
    "list_all_clusters",
    "list_all_queued",
]

_HEADER = ("NAME", "STATE", "WORKERS", "QUEUE", "APPWRAPPER", "REASON")


class ClusterList(list[ClusterStatus]):
    """Statuses of several clusters: a list, printed as a table (HTML in Jupyter)."""

    def __init__(self, items: Iterable[ClusterStatus] = (), *, namespace: str = "") -> None:
        super().__init__(items)
        self.namespace = namespace

    @property
    def _every_namespace(self) -> bool:
        return self.namespace == flarekit.client.ALL_NAMESPACES

    def header(self) -> tuple[str, ...]:
        """The table's column names (a NAMESPACE column first when listing every one)."""
        return ("NAMESPACE", *_HEADER) if self._every_namespace else _HEADER

    def rows(self) -> list[tuple[object, ...]]:
        """The table's rows, one per cluster, as the columns of `header` say."""
        rows: list[tuple[object, ...]] = [
            (s.name, s.state.value, s.workers, s.queue, s.appwrapper, s.reason) for s in self
        ]
        if self._every_namespace:
            return [(s.namespace, *row) for s, row in zip(self, rows, strict=True)]
        return rows

    def _title(self) -> str:
        if self._every_namespace:
            where = " in all namespaces"
        else:
            where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"Ray clusters{where}: {len(self)}"

    def __str__(self) -> str:
        if not self:
            return self._title()
        return text_table(self.rows(), header=self.header(), title=self._title())

    def _repr_html_(self) -> str:
        return html_table(self.rows(), header=self.header(), title=self._title())


def _client(client: flarekit.client.Client | None) -> flarekit.client.Client:
    if client is not None:
        return client

    return flarekit.client.Client()


def _raycluster_template(wrapper: Mapping[str, JsonValue]) -> JsonObject | None:
    """The RayCluster an AppWrapper (v1beta2, or MCAD's v1beta1) holds, as stored."""
    for template in wrapped_templates(wrapper):
        if flarekit.client.head_of(template).kind == "RayCluster":
            return template
    return None


def get_cluster(name: str, namespace: str | None = None, client: Client | None = None) -> Cluster:
    """The existing Ray cluster `name`: a RayCluster, or an AppWrapper holding one.

    The returned `Cluster`'s `config` is rebuilt from the stored object (see
    :func:`~flarekit.cluster.from_raycluster`). Raises `NotFound` when there is neither a
    RayCluster nor an AppWrapper holding a RayCluster of that name.
    """
    client = _client(client)
    ns = namespace or client.namespace or "default"
    source: ray_v1.RayCluster | JsonObject | None = None
    wrapper_name: str | None = None
    wrapped = False
    try:
        raycluster: ray_v1.RayCluster | None = client.get(ray_v1.RayCluster, name, namespace=ns)
    except NotFound:
        raycluster = None
    if raycluster is not None:
        wrapper_name = owning_appwrapper(raycluster)
        source = raycluster
    # Without a RayCluster, look for a queued AppWrapper that has not made it yet.
    candidates = [name] if raycluster is None else [wrapper_name] if wrapper_name else []
    for candidate in candidates:
        try:
            # In the version the server serves: v1beta2, or MCAD's v1beta1 (read as it is).
            kind = appwrapper_kind(client)
            wrapper = client.get(kind, candidate, namespace=ns).to_dict()
        except NotFound:
            continue
        template = _raycluster_template(wrapper)
        if template is not None:
            # The RayCluster inside may leave its name (and namespace) to the AppWrapper.
            metadata = template.setdefault("metadata", {})
            if isinstance(metadata, dict):
                metadata.setdefault("name", candidate)
            source, wrapper_name, wrapped = wrapper, candidate, True
    if source is None:
        raise _not_found(name, ns)
    config = from_raycluster(source)
    if config.namespace is None:
        config.namespace = ns
    cluster = Cluster(config, client)
    if wrapped and wrapper_name != config.name:
        cluster._appwrapper_name = wrapper_name
    return cluster


def _not_found(name: str, namespace: str) -> NotFound:
    return NotFound(
        flarekit.client.Operation("get", "rayclusters.ray.io", name, namespace),
        404,
        "NotFound",
        f"no RayCluster {name!r} and no AppWrapper {name!r} holding one in namespace "
        f"{namespace!r}",
    )


def _list(
    client: Client, kind: type[R], namespace: str, label_selector: str | None = None
) -> list[R]:
    try:
        return list(client.list(kind, namespace=namespace, label_selector=label_selector))
    except NotFound:  # the kind is not served (e.g. no AppWrapper controller installed)
        return []


def _key(obj: KubeResource) -> tuple[str, str]:
    meta = metadata_of(obj)
    return ((meta.namespace or "") if meta is not None else "", name_of(obj))


@dataclass(frozen=True)
class FoundCluster:
    """One Ray cluster as listed: its status, and the object it is on the server (its
    AppWrapper when wrapped, else its RayCluster)."""

    status: ClusterStatus
    resource: KubeResource


def find_clusters(
    client: Client, namespace: str, *, label_selector: str | None = None
) -> list[FoundCluster]:
    """Every Ray cluster in `namespace` (`ALL_NAMESPACES` for all), sorted by namespace and
    name; with `label_selector`, those whose top object (the AppWrapper of a wrapped one)
    has matching labels."""
    rayclusters = _list(client, ray_v1.RayCluster, namespace)
    matching = (
        {_key(rc) for rc in _list(client, ray_v1.RayCluster, namespace, label_selector)}
        if label_selector
        else {_key(rc) for rc in rayclusters}
    )
    wrappers = {
        _key(w): w
        for w in _list(client, appwrapper_kind(client), namespace, label_selector)
        if _raycluster_template(w.to_dict()) is not None
    }
    inside: dict[tuple[str, str], ray_v1.RayCluster] = {}
    found: list[FoundCluster] = []
    for rc in rayclusters:
        ns, _ = _key(rc)
        owner = owning_appwrapper(rc)
        if owner and (ns, owner) in wrappers:
            inside[(ns, owner)] = rc
        elif _key(rc) in matching and not (owner and label_selector):
            found.append(FoundCluster(cluster_status(rc, None, namespace=ns), rc))
    for key, wrapper in wrappers.items():
        status = cluster_status(inside.get(key), wrapper, namespace=key[0])
        found.append(FoundCluster(status, wrapper))
    return sorted(found, key=lambda f: (f.status.namespace, f.status.name))


def list_all_clusters(namespace: str | None = None, client: Client | None = None) -> ClusterList:
    """Every Ray cluster in `namespace` (the client's by default; `ALL_NAMESPACES` for all),
    sorted by namespace and name.

    An AppWrapper holding a RayCluster is one row, with the RayCluster's state once it
    exists; an AppWrapper still waiting for admission is listed without one.
    """
    client = _client(client)
    ns = namespace or client.namespace or "default"
    rows = [f.status for f in find_clusters(client, ns)]
    return ClusterList(rows, namespace=ns)


def list_all_queued(namespace: str | None = None, client: Client | None = None) -> ClusterList:
    """The Ray clusters in `namespace` waiting for Kueue to admit them: suspended with a queue
    label, or in an AppWrapper that is queued and not yet running (on a cluster running
    MCAD, AppWrappers waiting for MCAD to dispatch them: Kueue does not queue those)."""
    found = list_all_clusters(namespace, client)
    return ClusterList(
        (s for s in found if s.state is ClusterState.QUEUED), namespace=found.namespace
    )
