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
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import Event, quantity
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
from flarekit_testing.operators._pytorchjob import run_policy_suspended
from flarekit_testing.operators._queue_usage import report_queue_usage
from flarekit_testing.operators._webhooks import FINALIZER, KueueWebhooks

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
        ns = obj["metadata"]["namespace"]
        blocked, cluster_queue = self._blocker(cluster, obj)
        if blocked is None and cluster_queue is not None:
            assignments, blocked = self._assign(cluster, obj, cluster_queue)
        if blocked is not None:
            self._set_conditions(cluster, obj, [("QuotaReserved", False, "Inadmissible", blocked)])
            return
        assert cluster_queue is not None
        cq_name = cluster_queue["metadata"]["name"]
        with self._lock:
            asked = {(ns, obj["metadata"]["name"]), (ns, str(owner.get("name")))} & self._to_admit
        if since < self.admit_after or (self.pending and not asked):
            message = f"Workload is waiting for admission to ClusterQueue {cq_name}"
            self._set_conditions(cluster, obj, [("QuotaReserved", False, "Pending", message)])
            return
        with self._lock:
            self._to_admit -= asked
        changes = [
            ("QuotaReserved", True, "QuotaReserved", f"Quota reserved in ClusterQueue {cq_name}"),
            ("Admitted", True, "Admitted", "The workload is admitted"),
        ]
        if evicted is not None and evicted.get("status") == "True":
            previously = f"Previously: {evicted.get('message', '')}"
            changes.append(("Evicted", False, "QuotaReserved", previously))
        self.write_status(
            cluster,
            obj,
            {
                "admission": {"clusterQueue": cq_name, "podSetAssignments": assignments},
                "conditions": self._conditions_with(obj, changes),
            },
        )
        job = cluster.get(job_resource, str(owner.get("name")), ns)
        if job is not None and suspended(JOBS[job_resource], job):
            patch = suspend_patch(JOBS[job_resource], False)
            cluster.patch(job_resource, job["metadata"]["name"], patch, ns)

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

    def _assign(
        self, cluster: FakeCluster, workload: JSON, cq: JSON
    ) -> tuple[list[JSON], str | None]:
        """A flavor for every requested resource: the first flavor of the resource group
        that covers it, as Kueue tries flavors in order."""
        groups = (cq.get("spec") or {}).get("resourceGroups") or []
        out = []
        for pod_set in (workload.get("spec") or {}).get("podSets") or []:
            count = int(pod_set.get("count") or 0)
            per_pod = quantity.pod_requests(pod_set.get("template") or {})
            flavors: dict[str, str] = {}
            usage: dict[str, str] = {}
            for resource, amount in sorted(per_pod.items()):
                group = next(
                    (g for g in groups if resource in (g.get("coveredResources") or [])), None
                )
                if group is None or not group.get("flavors"):
                    message = (
                        f"couldn't assign flavors to pod set {pod_set.get('name')}: resource "
                        f"{resource} unavailable in ClusterQueue"
                    )
                    return [], message
                flavors[resource] = str(group["flavors"][0]["name"])
                usage[resource] = quantity.spell(resource, amount * count)
            out.append(
                {
                    "name": pod_set.get("name"),
                    "flavors": flavors,
                    "resourceUsage": usage,
                    "count": count,
                }
            )
        return out, None

    # -- queues ---------------------------------------------------------------------------------

    def after_tick(self, cluster: FakeCluster) -> None:
        active = {}
        for cq in cluster.objects(CLUSTER_QUEUES):
            active[cq["metadata"]["name"]] = state = self._cluster_queue_state(cluster, cq)
            self._set_active(cluster, CLUSTER_QUEUES, cq, *state)
        for lq in cluster.objects(LOCAL_QUEUES):
            spec = lq.get("spec") or {}
            cq_state = active.get(str(spec.get("clusterQueue", "")))
            inactive = "Can't submit new workloads to clusterQueue"
            if spec.get("stopPolicy", "None") != "None":
                state = (False, "Stopped", "LocalQueue is stopped")
            elif cq_state is None:
                state = (False, "ClusterQueueDoesNotExist", inactive)
            elif not cq_state[0]:
                state = (False, "ClusterQueueIsInactive", inactive)
            else:
                state = (True, "Ready", "Can submit new workloads to localQueue")
            self._set_active(cluster, LOCAL_QUEUES, lq, *state)
        report_queue_usage(cluster)  # admitted, pending and reserving Workloads, flavor usage
        self._release_deleted_queues(cluster)

    @staticmethod
    def _release_deleted_queues(cluster: FakeCluster) -> None:
        """Remove the `resource-in-use` finalizer Kueue's webhook gave a deleted ClusterQueue
        once no unfinished Workload is admitted to it, and a deleted ResourceFlavor's once no
        ClusterQueue names it, as Kueue's queue controllers do."""
        queues = cluster.objects(CLUSTER_QUEUES)
        in_use = {
            str(((w.get("status") or {}).get("admission") or {}).get("clusterQueue"))
            for w in cluster.objects(WORKLOADS)
            if (w.get("status") or {}).get("admission") and not condition(w, "Finished")
        }
        named = {
            str(f.get("name"))
            for cq in queues
            for group in (cq.get("spec") or {}).get("resourceGroups") or []
            for f in group.get("flavors") or []
        }
        for resource, objs, used in (
            (CLUSTER_QUEUES, queues, in_use),
            (FLAVORS, cluster.objects(FLAVORS), named),
        ):
            for obj in objs:
                meta = obj["metadata"]
                finalizers = meta.get("finalizers") or []
                if not meta.get("deletionTimestamp") or FINALIZER not in finalizers:
                    continue
                if meta["name"] not in used:
                    rest = [f for f in finalizers if f != FINALIZER]
                    cluster.patch(resource, meta["name"], {"metadata": {"finalizers": rest}})

    @staticmethod
    def _cluster_queue_state(cluster: FakeCluster, cq: JSON) -> tuple[bool, str, str]:
        spec = cq.get("spec") or {}
        if spec.get("stopPolicy", "None") != "None":
            return False, "Stopped", "Can't admit new workloads: is stopped."
        missing = sorted(
            {
                str(f.get("name"))
                for group in spec.get("resourceGroups") or []
                for f in group.get("flavors") or []
                if cluster.get(FLAVORS, str(f.get("name"))) is None
            }
        )
        if missing:
            message = f"references missing ResourceFlavor(s): {','.join(missing)}"
            return False, "FlavorNotFound", f"Can't admit new workloads: {message}."
        return True, "Ready", "Can admit new workloads"

    @staticmethod
    def _set_active(
        cluster: FakeCluster, resource: str, obj: JSON, status: bool, reason: str, message: str
    ) -> None:
        conditions = (obj.get("status") or {}).get("conditions") or []
        found: JSON = next((c for c in conditions if c.get("type") == "Active"), {})
        value = "True" if status else "False"
        generation = obj["metadata"].get("generation")
        # Kueue rewrites the condition for every new generation, so that `kubectl wait
        # --for=condition=Active` after a spec change sees the change observed.
        if (
            found.get("status"),
            found.get("reason"),
            found.get("message"),
            found.get("observedGeneration"),
        ) == (value, reason, message, generation):
            return
        changed = set_condition(conditions, "Active", status, reason, message, generation)
        meta = obj["metadata"]
        cluster.set_status(resource, meta["name"], {"conditions": changed}, meta.get("namespace"))

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
