"""A simulated Kueue: Workloads for queued jobs, admission, and suspension until admitted.

For a RayCluster, RayJob, TrainJob, AppWrapper or PyTorchJob labelled
`kueue.x-k8s.io/queue-name` (and not owned by another job), Kueue creates a Workload in the
job's namespace, named `<kind>-<job>-<suffix>`, owned by the job, listing the job's pod sets,
and keeps the job suspended (`spec.suspend: true`, `spec.runPolicy.suspend` for a PyTorchJob,
which Kueue's webhook sets on create) until the Workload is
admitted. Admission needs the LocalQueue, its ClusterQueue, and every ResourceFlavor the
ClusterQueue names; otherwise the Workload stays pending with Kueue's `QuotaReserved: False`
/ `Inadmissible` condition and message (`LocalQueue x doesn't exist`, `ClusterQueue y is
inactive`, ...). Admitting writes `status.admission` (the ClusterQueue, a flavor per
requested resource, the resource usage per pod set) and the `QuotaReserved` and `Admitted`
conditions, then unsuspends the job. Quota amounts are not enforced. A finished job marks its
Workload `Finished`; a deleted job takes its Workload with it.

A Workload deactivated (`spec.active: false`) is evicted as Kueue evicts it: `Evicted` with
reason `Deactivated`, its quota released (`QuotaReserved` and `Admitted` false, no
`status.admission`), `Requeued` false, and its job suspended. Activated again, it is
`Requeued` (`Reactivated`) and admitted anew, `Evicted` turning false with the message
`Previously: ...`, as Kueue v0.19 words it.

Queues report whether they can be used as Kueue's queue controllers do: a ClusterQueue's
`Active` condition (`Ready`, or `FlavorNotFound` / `Stopped` with Kueue's message) and a
LocalQueue's (`Ready`, `ClusterQueueDoesNotExist`, `ClusterQueueIsInactive`, `Stopped`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import Event
from flarekit_testing.operators import _podsets as podsets
from flarekit_testing.operators._base import (
    QUEUE_LABEL,
    Clock,
    SimController,
    check_delay,
    condition,
    controller_owner,
    delete_quietly,
    is_suspended,
    owner_reference,
    set_condition,
    suffix,
)
from flarekit_testing.operators._flavor_assignment import Assignment, QuotaTree, assign_flavors
from flarekit_testing.operators._kueue_queues import keep_finalizers, report_queue_states
from flarekit_testing.operators._pytorchjob import run_policy_suspended
from flarekit_testing.operators._queue_usage import report_queue_usage
from flarekit_testing.operators._webhooks import KueueWebhooks

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

JSON = dict[str, Any]

JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
#: The job kinds this simulation queues, by resource name.
JOBS = {
    "rayclusters.ray.io": "RayCluster",
    "rayjobs.ray.io": "RayJob",
    "trainjobs.trainer.kubeflow.org": "TrainJob",
    "appwrappers.workload.codeflare.dev": "AppWrapper",
    "pytorchjobs.kubeflow.org": "PyTorchJob",
}
WORKLOADS = "workloads.kueue.x-k8s.io"
CLUSTER_QUEUES = "clusterqueues.kueue.x-k8s.io"
LOCAL_QUEUES = "localqueues.kueue.x-k8s.io"
FLAVORS = "resourceflavors.kueue.x-k8s.io"
COHORTS = "cohorts.kueue.x-k8s.io"


@dataclass
class _Candidate:
    """A pending Workload whose queues exist, waiting for this tick's scheduling pass."""

    workload: JSON
    cluster_queue: JSON
    job_resource: str
    owner: JSON
    since: float


def holds_quota(workload: Mapping[str, Any]) -> bool:
    """Whether a Workload's admission counts against its ClusterQueue (reserved, not finished)."""
    reserved = condition(workload, "QuotaReserved") or {}
    done = condition(workload, "Finished") or {}
    admission = (workload.get("status") or {}).get("admission")
    return reserved.get("status") == "True" and done.get("status") != "True" and bool(admission)


def _queue_order(candidate: _Candidate) -> tuple[int, str, str]:
    """Kueue's queue order: higher priority first, then the older Workload."""
    obj = candidate.workload
    priority = int((obj.get("spec") or {}).get("priority") or 0)
    return (-priority, str(obj["metadata"].get("creationTimestamp") or ""), obj["metadata"]["name"])


def finished(kind: str, obj: Mapping[str, Any]) -> tuple[bool, str] | None:
    """(succeeded, message) once a job has ended, else None."""
    status = obj.get("status") or {}
    if kind == "RayJob" and status.get("jobDeploymentStatus") in ("Complete", "Failed"):
        ok = status["jobDeploymentStatus"] == "Complete"
        return ok, "Job finished successfully" if ok else str(status.get("message") or "Job failed")
    if kind == "TrainJob":
        for type_, ok in (("Complete", True), ("Failed", False)):
            found = condition(obj, type_)
            if found is not None and found.get("status") == "True":
                return ok, str(found.get("message") or type_)
    if kind == "PyTorchJob":
        for type_, ok in (("Succeeded", True), ("Failed", False)):
            found = condition(obj, type_)
            if found is not None and found.get("status") == "True":
                return ok, str(found.get("message") or type_)
    if kind == "AppWrapper" and status.get("phase") in ("Succeeded", "Failed"):
        ok = status["phase"] == "Succeeded"
        return ok, "AppWrapper finished successfully" if ok else "AppWrapper failed"
    return None


def suspended(kind: str, obj: Mapping[str, Any]) -> bool:
    """Whether a job is suspended (the training operator's jobs say so in `runPolicy`)."""
    return run_policy_suspended(dict(obj)) if kind == "PyTorchJob" else is_suspended(obj)


def suspend_patch(kind: str, value: bool) -> JSON:
    """The merge patch that suspends (or resumes) a job of `kind`."""
    if kind == "PyTorchJob":
        return {"spec": {"runPolicy": {"suspend": value}}}
    return {"spec": {"suspend": value}}


class KueueController(SimController):
    """Queues labelled jobs and admits their Workloads `admit_after` seconds after creation.

    With `pending=True` nothing is admitted until the test calls `admit(workload_or_job,
    namespace)`; a Workload whose queues are missing or inactive stays pending either way.
    """

    resource = WORKLOADS
    #: Kueue's admission webhooks (finalizers, quotas, suspended queued jobs; `_webhooks`)
    webhooks = (KueueWebhooks(),)

    def __init__(
        self, admit_after: float = 0.0, *, pending: bool = False, clock: Clock | None = None
    ) -> None:
        super().__init__(clock)
        check_delay("admit_after", admit_after)
        self.admit_after = admit_after
        self.pending = pending
        self._to_admit: set[tuple[str, str]] = set()
        self._candidates: list[_Candidate] = []
        self._lock = threading.Lock()

    def admit(self, name: str, namespace: str = "default") -> None:
        """Let a Workload (by its own name or its job's name) be admitted on the next tick."""
        with self._lock:
            self._to_admit.add((namespace, name))

    # -- jobs -----------------------------------------------------------------------------------

    def on_other_event(self, cluster: FakeCluster, event: Event) -> None:
        resource = f"{event.key[1]}.{event.key[0]}"
        kind = JOBS.get(resource)
        if kind is None:
            return
        obj = event.obj
        if event.type == "DELETED":
            for workload in self._workloads_of(cluster, obj):
                delete_quietly(cluster, WORKLOADS, workload)
            return
        current = cluster.get(resource, obj["metadata"]["name"], obj["metadata"].get("namespace"))
        if current is None or current["metadata"]["uid"] != obj["metadata"]["uid"]:
            return  # gone since: its DELETED event follows
        obj = current
        labels = obj["metadata"].get("labels") or {}
        if not labels.get(QUEUE_LABEL) or controller_owner(obj) is not None:
            return
        workloads = self._workloads_of(cluster, obj)
        workload = workloads[0] if workloads else self._create_workload(cluster, kind, obj)
        admitted = condition(workload, "Admitted")
        done = finished(kind, obj)
        if admitted is None or admitted.get("status") != "True":
            if done is None and not suspended(kind, obj):  # as Kueue's webhook does on create
                meta = obj["metadata"]
                patch = suspend_patch(kind, True)
                cluster.patch(resource, meta["name"], patch, meta.get("namespace"))
        elif done is not None and condition(workload, "Finished") is None:
            reason = "Succeeded" if done[0] else "Failed"
            self._set_conditions(cluster, workload, [("Finished", True, reason, done[1])])

    def _workloads_of(self, cluster: FakeCluster, job: Mapping[str, Any]) -> list[JSON]:
        uid = job["metadata"].get("uid")
        return [
            w
            for w in cluster.objects(WORKLOADS, job["metadata"].get("namespace"))
            if (w["metadata"].get("labels") or {}).get(JOB_UID_LABEL) == uid
        ]

    def _create_workload(self, cluster: FakeCluster, kind: str, job: JSON) -> JSON:
        meta = job["metadata"]
        rt = self.rt(cluster)
        prefix = f"{kind.lower()}-{meta['name']}"[:240]
        sets = [
            {"name": name, "count": count, "template": template}
            for name, count, template in podsets.for_job(cluster, kind, job)
        ]
        return cluster.create(
            {
                "apiVersion": rt.api_version(rt.storage_version),
                "kind": "Workload",
                "metadata": {
                    "name": f"{prefix}-{suffix(str(meta['uid']), kind)}",
                    "namespace": meta.get("namespace"),
                    "labels": {JOB_UID_LABEL: str(meta["uid"])},
                    "ownerReferences": [owner_reference(job)],
                },
                "spec": {"queueName": meta["labels"][QUEUE_LABEL], "podSets": sets},
            }
        )

    # -- admission ------------------------------------------------------------------------------

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        if condition(obj, "Finished"):
            return
        owner = controller_owner(obj) or {}
        job_resource = next((r for r, k in JOBS.items() if k == owner.get("kind")), None)
        if job_resource is None:
            return
        if (obj.get("spec") or {}).get("active") is False:
            self._deactivate(cluster, obj, job_resource, str(owner.get("name")))
            return
        found = condition(obj, "Admitted")
        if found is not None and found.get("status") == "True":
            return
        evicted = condition(obj, "Evicted")
        deactivated = evicted is not None and evicted.get("reason") == "Deactivated"
        requeued = condition(obj, "Requeued") or {}
        if deactivated and requeued.get("reason") != "Reactivated":
            self._set_conditions(
                cluster, obj, [("Requeued", True, "Reactivated", "The workload was reactivated")]
            )
            return
        blocked, cluster_queue = self._blocker(cluster, obj)
        if blocked is not None:
            self._set_conditions(cluster, obj, [("QuotaReserved", False, "Inadmissible", blocked)])
            return
        assert cluster_queue is not None
        self._candidates.append(_Candidate(obj, cluster_queue, job_resource, owner, since))

    def _schedule(self, cluster: FakeCluster) -> None:
        """Kueue's scheduling pass: the pending Workloads in queue order (priority, then age),
        each admitted when its flavors fit what its ClusterQueue and cohort have left (what
        it takes counts against the next ones), else left pending with Kueue's reason."""
        candidates, self._candidates = self._candidates, []
        if not candidates:
            return
        tree = QuotaTree(
            cluster.objects(CLUSTER_QUEUES),
            self._cohorts(cluster),
            [w for w in cluster.objects(WORKLOADS) if holds_quota(w)],
        )
        flavors = {str(f["metadata"]["name"]): f for f in cluster.objects(FLAVORS)}
        blocked_queues: set[str] = set()
        for candidate in sorted(candidates, key=_queue_order):
            obj, cq = candidate.workload, candidate.cluster_queue
            cq_name = str(cq["metadata"]["name"])
            if cq_name in blocked_queues:
                continue  # StrictFIFO: nothing passes the head of the queue
            assignment = assign_flavors(obj, cq_name, tree, flavors)
            if not assignment.fits:
                self._set_conditions(
                    cluster, obj, [("QuotaReserved", False, "Pending", assignment.message())]
                )
                if (cq.get("spec") or {}).get("queueingStrategy") == "StrictFIFO":
                    blocked_queues.add(cq_name)
                continue
            if self._admit(cluster, candidate, assignment):
                tree.add_usage(cq_name, assignment.usage())

    def _admit(self, cluster: FakeCluster, candidate: _Candidate, assignment: Assignment) -> bool:
        """Reserve quota for a Workload that fits and unsuspend its job, unless the test holds
        it back (`pending=True` until `admit()`, `admit_after`)."""
        obj, owner = candidate.workload, candidate.owner
        ns = obj["metadata"]["namespace"]
        cq_name = assignment.cluster_queue
        with self._lock:
            asked = {(ns, obj["metadata"]["name"]), (ns, str(owner.get("name")))} & self._to_admit
        if candidate.since < self.admit_after or (self.pending and not asked):
            message = f"Workload is waiting for admission to ClusterQueue {cq_name}"
            self._set_conditions(cluster, obj, [("QuotaReserved", False, "Pending", message)])
            return False
        with self._lock:
            self._to_admit -= asked
        changes = [
            ("QuotaReserved", True, "QuotaReserved", f"Quota reserved in ClusterQueue {cq_name}"),
            ("Admitted", True, "Admitted", "The workload is admitted"),
        ]
        evicted = condition(obj, "Evicted")
        if evicted is not None and evicted.get("status") == "True":
            previously = f"Previously: {evicted.get('message', '')}"
            changes.append(("Evicted", False, "QuotaReserved", previously))
        admission = {
            "clusterQueue": cq_name,
            "podSetAssignments": [p.to_api() for p in assignment.pod_sets],
        }
        self.write_status(
            cluster,
            obj,
            {"admission": admission, "conditions": self._conditions_with(obj, changes)},
        )
        job_resource = candidate.job_resource
        job = cluster.get(job_resource, str(owner.get("name")), ns)
        if job is not None and suspended(JOBS[job_resource], job):
            patch = suspend_patch(JOBS[job_resource], False)
            cluster.patch(job_resource, job["metadata"]["name"], patch, ns)
        return True

    @staticmethod
    def _cohorts(cluster: FakeCluster) -> list[JSON]:
        try:
            return cluster.objects(COHORTS)
        except ValueError:  # a release without Cohort objects
            return []

    def _deactivate(self, cluster: FakeCluster, obj: JSON, job_resource: str, job: str) -> None:
        """Evict a deactivated Workload and suspend its job (once)."""
        evicted = condition(obj, "Evicted") or {}
        if evicted.get("status") != "True" or evicted.get("reason") != "Deactivated":
            message = "The workload is deactivated"
            self.write_status(
                cluster,
                obj,
                {
                    "admission": None,
                    "conditions": self._conditions_with(
                        obj,
                        [
                            ("QuotaReserved", False, "Pending", message),
                            ("Evicted", True, "Deactivated", message),
                            ("Admitted", False, "NoReservation", "The workload has no reservation"),
                            ("Requeued", False, "Deactivated", message),
                        ],
                    ),
                },
            )
        ns = obj["metadata"]["namespace"]
        found = cluster.get(job_resource, job, ns)
        if found is not None and not suspended(JOBS[job_resource], found):
            cluster.patch(job_resource, job, suspend_patch(JOBS[job_resource], True), ns)

    def _blocker(self, cluster: FakeCluster, workload: JSON) -> tuple[str | None, JSON | None]:
        """Why the Workload cannot be admitted yet (Kueue's wording), and its ClusterQueue."""
        ns = workload["metadata"]["namespace"]
        queue_name = str((workload.get("spec") or {}).get("queueName", ""))
        local = cluster.get("localqueues.kueue.x-k8s.io", queue_name, ns)
        if local is None:
            return f"LocalQueue {queue_name} doesn't exist", None
        if (local.get("spec") or {}).get("stopPolicy", "None") != "None":
            return f"LocalQueue {queue_name} is inactive", None
        cq_name = str((local.get("spec") or {}).get("clusterQueue", ""))
        cq = cluster.get("clusterqueues.kueue.x-k8s.io", cq_name)
        if cq is None:
            return f"ClusterQueue {cq_name} doesn't exist", None
        flavors = [
            f.get("name")
            for group in (cq.get("spec") or {}).get("resourceGroups") or []
            for f in group.get("flavors") or []
        ]
        missing = [
            f for f in flavors if cluster.get("resourceflavors.kueue.x-k8s.io", str(f)) is None
        ]
        if missing or (cq.get("spec") or {}).get("stopPolicy", "None") != "None":
            return f"ClusterQueue {cq_name} is inactive", cq
        return None, cq

    # -- queues ---------------------------------------------------------------------------------

    def after_tick(self, cluster: FakeCluster) -> None:
        self._schedule(cluster)
        report_queue_states(cluster)  # Active conditions of ClusterQueues and LocalQueues
        reserving: dict[str, int] = {}
        for workload in cluster.objects(WORKLOADS):
            if holds_quota(workload):
                cq = str(
                    ((workload.get("status") or {}).get("admission") or {}).get("clusterQueue")
                )
                reserving[cq] = reserving.get(cq, 0) + 1
        keep_finalizers(cluster, reserving)
        report_queue_usage(cluster)  # admitted, pending and reserving Workloads, flavor usage

    # -- conditions -----------------------------------------------------------------------------

    def _conditions_with(self, obj: JSON, changes: list[tuple[str, bool, str, str]]) -> list[JSON]:
        conditions = list((obj.get("status") or {}).get("conditions") or [])
        generation = obj["metadata"].get("generation")
        for type_, status, reason, message in changes:
            conditions = set_condition(conditions, type_, status, reason, message, generation)
        return conditions

    def _set_conditions(
        self, cluster: FakeCluster, obj: JSON, changes: list[tuple[str, bool, str, str]]
    ) -> None:
        self.write_status(cluster, obj, {"conditions": self._conditions_with(obj, changes)})
