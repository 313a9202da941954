"""What the walkthrough can leave behind on a cluster, read through the API.

Why: on the real stack (``--real-stack``) the cluster already holds many objects before the
walkthrough starts (the operators' RBAC, webhook configurations, runtimes, the nodes), so
"nothing is left" means nothing *new* is left. :class:`Footprint` lists, before the first
step, every object the walkthrough could create or cause (those of its namespace and the
cluster-scoped ones, of every resource the server lists), and after the teardown names those
that were not there before. Objects of the other namespaces are not read: other work on the
cluster may come and go meanwhile. Events and Leases are the cluster's own records and
heartbeats, not objects anyone creates, and are not counted.
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

import flarekit
import flarekit.client

if TYPE_CHECKING:
    from flarekit import Client
    from flarekit.client import GenericResource

__all__ = ["Footprint"]

#: (group, plural) of records the cluster writes itself: not left behind by anyone.
_RECORDS = frozenset(
    {("", "events"), ("events.k8s.io", "events"), ("coordination.k8s.io", "leases")}
)


class _Discovered(BaseModel):
    """The fields of discovery documents read here (``/apis``, ``/apis/<group>/<version>``);
    the rest is kept, as everywhere in flarekit."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class _Version(_Discovered):
    version: str


class _Group(_Discovered):
    name: str
    preferred_version: _Version = Field(alias="preferredVersion")


class _Groups(_Discovered):
    groups: list[_Group] = []


class _Resource(_Discovered):
    name: str
    kind: str
    namespaced: bool
    verbs: list[str] = []


class _Resources(_Discovered):
    resources: list[_Resource] = []


def _listable(client: Client) -> list[type[GenericResource]]:
    """A model for every resource the server lists, at its group's preferred version."""
    versions = ["v1"]
    groups = _Groups.model_validate_json(client.get_raw("/apis")).groups
    versions += [f"{g.name}/{g.preferred_version.version}" for g in groups]
    found: list[type[GenericResource]] = []
    for api_version in versions:
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        group = api_version.rpartition("/")[0]
        for res in _Resources.model_validate_json(client.get_raw(path)).resources:
            if "/" in res.name or "list" not in res.verbs or (group, res.name) in _RECORDS:
                continue
            found.append(
                flarekit.client.generic_resource(
                    api_version, res.kind, res.name, namespaced=res.namespaced
                )
            )
    return found


class Footprint:
    """The objects of `namespace` and the cluster-scoped ones, as they are when made."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.before = self._take()

    def _take(self) -> dict[str, str]:
        """uid (or, without one, the description) -> ``Kind namespace/name``."""
        seen: dict[str, str] = {}
        for model in _listable(self.client):
            info = model.resource_info()
            namespace = self.namespace if info.namespaced else None
            try:
                with warnings.catch_warnings():  # deprecated kinds are read all the same
                    warnings.simplefilter("ignore")
                    items = list(self.client.list(model, namespace=namespace))
            except flarekit.NotFound:  # a resource removed since discovery (a CRD deleted)
                continue
            for item in items:
                meta = item.metadata
                if meta is None:
                    continue
                where = f"{meta.namespace}/" if meta.namespace else ""
                described = f"{info.kind} {where}{meta.name}"
                seen[meta.uid or described] = described
        return seen

    def added(self) -> list[str]:
        """What exists now and did not when the footprint was made, sorted."""
        now = self._take()
        return sorted(described for key, described in now.items() if key not in self.before)

    def settled(self, timeout: float, poll: float = 1.0) -> list[str]:
        """`added()` once the cluster has caught up (garbage collection of pods, Workloads),
        or what is still there after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.added()
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(poll)
