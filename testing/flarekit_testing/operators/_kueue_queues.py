"""The simulated Kueue's queue controllers: the `Active` condition of ClusterQueues and
LocalQueues, and the `kueue.x-k8s.io/resource-in-use` finalizer Kueue keeps on ClusterQueues
and ResourceFlavors.

Why: users (and `kubectl wait --for=condition=Active`) read whether a queue can be used from
its `Active` condition, which Kueue writes with the object's current generation as
`observedGeneration`, so a spec change is followed by a condition of the new generation even
when nothing else changes. Kueue's webhooks put the finalizer on every ClusterQueue and
ResourceFlavor it sees, so deleting one answers with the object, now terminating, and it is
gone only once nothing uses it: a ClusterQueue when no Workload holds quota in it (meanwhile
`Active` is False, reason `Terminating`), a ResourceFlavor when no ClusterQueue names it. Here
the simulated webhook (`flarekit_testing.operators._webhooks`) adds the finalizer when the
object is created, the controller puts it back when an update removed it, and removes it on
the tick after a deleted object stops being used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import ApiError
from flarekit_testing.operators._base import set_condition
from flarekit_testing.operators._webhooks import FINALIZER

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

__all__ = ["FINALIZER", "keep_finalizers", "report_queue_states"]

JSON = dict[str, Any]
CLUSTER_QUEUES = "clusterqueues.kueue.x-k8s.io"
LOCAL_QUEUES = "localqueues.kueue.x-k8s.io"
FLAVORS = "resourceflavors.kueue.x-k8s.io"
WORKLOADS = "workloads.kueue.x-k8s.io"
State = tuple[bool, str, str]


def _flavor_names(cq: Mapping[str, Any]) -> set[str]:
    return {
        str(f.get("name"))
        for group in (cq.get("spec") or {}).get("resourceGroups") or []
        for f in group.get("flavors") or []
    }


def _cluster_queue_state(cluster: FakeCluster, cq: JSON) -> State:
    """Kueue's readiness of a ClusterQueue: (active, reason, message)."""
    if cq["metadata"].get("deletionTimestamp"):
        return False, "Terminating", "Can't admit new workloads; clusterQueue is terminating"
    if (cq.get("spec") or {}).get("stopPolicy", "None") != "None":
        return False, "Stopped", "Can't admit new workloads: is stopped."
    missing = sorted(f for f in _flavor_names(cq) if cluster.get(FLAVORS, f) is None)
    if missing:
        message = f"references missing ResourceFlavor(s): {','.join(missing)}"
        return False, "FlavorNotFound", f"Can't admit new workloads: {message}."
    return True, "Ready", "Can admit new workloads"


def _local_queue_state(lq: JSON, cq_state: State | None) -> State:
    spec = lq.get("spec") or {}
    inactive = "Can't submit new workloads to clusterQueue"
    if spec.get("stopPolicy", "None") != "None":
        return False, "Stopped", "LocalQueue is stopped"
    if cq_state is None:
        return False, "ClusterQueueDoesNotExist", inactive
    if not cq_state[0]:
        return False, "ClusterQueueIsInactive", inactive
    return True, "Ready", "Can submit new workloads to localQueue"


def _set_active(cluster: FakeCluster, resource: str, obj: JSON, state: State) -> None:
    """Write the `Active` condition when it, or the generation it describes, changed."""
    status, reason, message = state
    generation = obj["metadata"].get("generation")
    conditions = (obj.get("status") or {}).get("conditions") or []
    found: JSON = next((c for c in conditions if c.get("type") == "Active"), {})
    now = ("True" if status else "False", reason, message, generation)
    if (found.get("status"), found.get("reason"), found.get("message"), found.get(
        "observedGeneration"
    )) == now:  # fmt: skip
        return
    changed = set_condition(conditions, "Active", status, reason, message, generation)
    meta = obj["metadata"]
    cluster.set_status(resource, meta["name"], {"conditions": changed}, meta.get("namespace"))


def report_queue_states(cluster: FakeCluster) -> None:
    """Bring every ClusterQueue's and LocalQueue's `Active` condition up to date."""
    states: dict[str, State] = {}
    for cq in cluster.objects(CLUSTER_QUEUES):
        states[cq["metadata"]["name"]] = state = _cluster_queue_state(cluster, cq)
        _set_active(cluster, CLUSTER_QUEUES, cq, state)
    for lq in cluster.objects(LOCAL_QUEUES):
        cq_state = states.get(str((lq.get("spec") or {}).get("clusterQueue", "")))
        _set_active(cluster, LOCAL_QUEUES, lq, _local_queue_state(lq, cq_state))


def _set_finalizer(cluster: FakeCluster, resource: str, obj: JSON, present: bool) -> None:
    meta = obj["metadata"]
    finalizers = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
    if present:
        finalizers.append(FINALIZER)
    patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
    try:
        cluster.patch(resource, meta["name"], patch)
    except ApiError as exc:
        if exc.code not in (404, 409):  # gone, or changed since: the next tick sees it again
            raise


def keep_finalizers(cluster: FakeCluster, reserving: Mapping[str, int]) -> None:
    """Add the finalizer to ClusterQueues and ResourceFlavors that lack it, and remove it from
    deleted ones nothing uses any more (`reserving`: Workloads holding quota per ClusterQueue)."""
    queues = cluster.objects(CLUSTER_QUEUES)
    for cq in queues:
        meta = cq["metadata"]
        has = FINALIZER in (meta.get("finalizers") or [])
        if not meta.get("deletionTimestamp"):
            if not has:
                _set_finalizer(cluster, CLUSTER_QUEUES, cq, True)
        elif has and not reserving.get(meta["name"]):
            _set_finalizer(cluster, CLUSTER_QUEUES, cq, False)
    used = {f for cq in queues for f in _flavor_names(cq)}
    for flavor in cluster.objects(FLAVORS):
        meta = flavor["metadata"]
        has = FINALIZER in (meta.get("finalizers") or [])
        if not meta.get("deletionTimestamp"):
            if not has:
                _set_finalizer(cluster, FLAVORS, flavor, True)
        elif has and meta["name"] not in used:
            _set_finalizer(cluster, FLAVORS, flavor, False)
