"""The simulated Kueue's report on its queues: how many Workloads each ClusterQueue and
LocalQueue has admitted, reserved and left pending, and how much of each flavor they use.

Why: real Kueue keeps ``status`` of every ClusterQueue and LocalQueue up to date
(``admittedWorkloads``, ``pendingWorkloads``, ``reservingWorkloads``, ``flavorsUsage``, and
``flavorsReservation`` on ClusterQueues), and users read it to see whether a queue is full
(``borrowed``: how much of a flavor's usage is past the queue's nominal quota, lent by its
cohort).
Without it a queue listing on the practice cluster showed no usage while work was admitted.
Usage counts the Workloads that hold quota (admitted and not finished), from their
``podSetAssignments``; every flavor and resource of the ClusterQueue is reported, zero or
not, as Kueue does. Status is written in the shape the served version declares (v1beta1
LocalQueues call the field ``flavorUsage``), and only when it changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import quantity
from flarekit_testing.operators._base import condition, fit_patch, subschema

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

__all__ = ["report_queue_usage"]

JSON = dict[str, Any]
CLUSTER_QUEUES = "clusterqueues.kueue.x-k8s.io"
LOCAL_QUEUES = "localqueues.kueue.x-k8s.io"
WORKLOADS = "workloads.kueue.x-k8s.io"


@dataclass
class _Tally:
    admitted: int = 0
    pending: int = 0
    reserving: int = 0
    used: dict[tuple[str, str], Fraction] = field(default_factory=dict)


def _is_true(obj: Mapping[str, Any], type_: str) -> bool:
    found = condition(obj, type_)
    return found is not None and found.get("status") == "True"


def _tally(cluster: FakeCluster) -> tuple[dict[str, _Tally], dict[tuple[str, str], _Tally]]:
    """Per ClusterQueue and per (namespace, LocalQueue): counts and flavor usage."""
    per_cq: dict[str, _Tally] = {}
    per_lq: dict[tuple[str, str], _Tally] = {}
    for workload in cluster.objects(WORKLOADS):
        if _is_true(workload, "Finished"):
            continue
        ns = str(workload["metadata"].get("namespace") or "")
        local = per_lq.setdefault(
            (ns, str((workload.get("spec") or {}).get("queueName"))), _Tally()
        )
        admission = (workload.get("status") or {}).get("admission") or {}
        reserved = _is_true(workload, "QuotaReserved") and bool(admission)
        cq = per_cq.setdefault(str(admission.get("clusterQueue") or ""), _Tally())
        if not reserved:
            local.pending += 1
            continue
        admitted = _is_true(workload, "Admitted")
        for tally in (local, cq):
            tally.reserving += 1
            tally.admitted += int(admitted)
        for assignment in admission.get("podSetAssignments") or []:
            flavors = assignment.get("flavors") or {}
            for resource, amount in (assignment.get("resourceUsage") or {}).items():
                key = (str(flavors.get(resource, "")), str(resource))
                for tally in (local, cq):
                    tally.used[key] = tally.used.get(key, Fraction(0)) + quantity.parse(amount)
    return per_cq, per_lq


def _flavors(cq: Mapping[str, Any] | None, used: Mapping[tuple[str, str], Fraction]) -> list[JSON]:
    """Usage per flavor and resource: every one the ClusterQueue covers, then any other."""
    keys: list[tuple[str, str]] = []
    nominal: dict[tuple[str, str], Fraction] = {}
    for group in ((cq or {}).get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                key = (str(flavor.get("name")), str(resource.get("name")))
                keys.append(key)
                nominal[key] = quantity.parse(resource.get("nominalQuota", 0))
    keys += [k for k in used if k not in keys]
    out: dict[str, list[JSON]] = {}
    for flavor, resource in keys:
        amount = used.get((flavor, resource), Fraction(0))
        borrowed = max(Fraction(0), amount - nominal.get((flavor, resource), Fraction(0)))
        out.setdefault(flavor, []).append(
            {
                "name": resource,
                "total": quantity.spell(resource, amount),
                "borrowed": quantity.spell(resource, borrowed),  # past the nominal quota
            }
        )
    return [{"name": name, "resources": resources} for name, resources in out.items()]


def _write(cluster: FakeCluster, resource: str, obj: Mapping[str, Any], status: JSON) -> None:
    fitted = fit_patch(status, subschema(cluster.resource(resource), "status"))
    current = obj.get("status") or {}
    if all(current.get(k) == v for k, v in fitted.items()):
        return
    meta = obj["metadata"]
    cluster.set_status(resource, meta["name"], fitted, meta.get("namespace"))


def report_queue_usage(cluster: FakeCluster) -> None:
    """Bring every ClusterQueue's and LocalQueue's status up to date with the Workloads."""
    per_cq, per_lq = _tally(cluster)
    queues = {str(cq["metadata"]["name"]): cq for cq in cluster.objects(CLUSTER_QUEUES)}
    for name, cq in queues.items():
        tally = per_cq.get(name, _Tally())
        flavors = _flavors(cq, tally.used)
        pending = sum(
            t.pending
            for (ns, lq_name), t in per_lq.items()
            if _cluster_queue_of(cluster, ns, lq_name) == name
        )
        status = {
            "admittedWorkloads": tally.admitted,
            "pendingWorkloads": pending,
            "reservingWorkloads": tally.reserving,
            "flavorsUsage": flavors,
            "flavorsReservation": flavors,
        }
        _write(cluster, CLUSTER_QUEUES, cq, status)
    for local in cluster.objects(LOCAL_QUEUES):
        key = (str(local["metadata"].get("namespace") or ""), str(local["metadata"]["name"]))
        tally = per_lq.get(key, _Tally())
        cq_name = str((local.get("spec") or {}).get("clusterQueue") or "")
        usage = [
            {
                "name": f["name"],
                "resources": [{"name": r["name"], "total": r["total"]} for r in f["resources"]],
            }
            for f in _flavors(queues.get(cq_name), tally.used)
        ]
        status = {
            "admittedWorkloads": tally.admitted,
            "pendingWorkloads": tally.pending,
            "reservingWorkloads": tally.reserving,
            "flavorsUsage": usage,  # v1beta2
            "flavorUsage": usage,  # v1beta1: only the served one is kept
        }
        _write(cluster, LOCAL_QUEUES, local, status)


def _cluster_queue_of(cluster: FakeCluster, namespace: str, local_queue: str) -> str | None:
    local = cluster.get(LOCAL_QUEUES, local_queue, namespace)
    return str((local.get("spec") or {}).get("clusterQueue")) if local is not None else None
