"""A simulated KubeRay RayJob controller: Initializing -> Running -> Complete or Failed.

As KubeRay does it, a new RayJob gets a `jobId` and a `rayClusterName`, and either creates
its own RayCluster from `spec.rayClusterSpec` (owned by the job, named `<job>-<suffix>`) or
uses the cluster named by `spec.clusterSelector["ray.io/cluster"]`. After `start_after`
seconds (and, with `wait_for_cluster`, once that cluster's `state` is `ready`) the job is
Running with Ray's job status PENDING, then RUNNING on the next tick, and `run_for` seconds
later Complete/SUCCEEDED or Failed/FAILED (`reason: AppFailed` and a `message`). With
`shutdownAfterJobFinishes` the job's own cluster is deleted `ttlSecondsAfterFinished` after
the end. A new job gets KubeRay's `ray.io/rayjob-finalizer`, which holds a deleted job until
KubeRay has tried to stop it (a job that has not ended: 2 s, as against a Ray dashboard that
does not answer, for FakeCluster runs none). `spec.suspend: true` holds a new job in
`Suspended`, or takes a started one through `Suspending` (its cluster deleted) back to
`Suspended`; resuming starts it over.

In `K8sJobMode` (the default) the job gets a submitter pod when it starts running, as the pod
of KubeRay's submitter Job (named like the RayJob) carries the Job controller's labels
(`job-name`, `batch.kubernetes.io/job-name`, `controller-uid`). It prints what `ray job
submit` prints around the job's own output (`logs=lambda job, pod: [...]`, none by default),
and ends Succeeded or Failed with the job. `HTTPMode` and `SidecarMode` jobs get no pod.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flarekit_testing.operators import _pods as _sim_pods
from flarekit_testing.operators import _podsets as podsets
from flarekit_testing.operators._base import (
    Clock,
    SimController,
    check_delay,
    delete_quietly,
    is_suspended,
    owner_reference,
    suffix,
    timestamp,
)
from flarekit_testing.operators._outcome import fails, runs_for

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

JSON = dict[str, Any]

CLUSTER_LABEL = "ray.io/cluster"
#: KubeRay stops the Ray job before a deleted RayJob goes (`ray.io/rayjob-finalizer`).
FINALIZER = "ray.io/rayjob-finalizer"
#: How long KubeRay's dashboard client waits for an answer (seconds).
STOP_TIMEOUT = 2.0
TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
DEFAULT_FAILURE = "Job entrypoint command failed with exit code 1"
_RESET = {
    "jobId": None,
    "rayClusterName": None,
    "dashboardURL": None,
    "jobStatus": None,
    "startTime": None,
    "endTime": None,
    "rayClusterStatus": None,
    "reason": None,
    "message": None,
}


class RayJobController(SimController):
    """Runs RayJobs on a schedule: `start_after` seconds initializing, `run_for` running.

    `fail=True` (or `fail_when(obj)` returning True) ends jobs Failed with `failure_message`.
    `wait_for_cluster=True` keeps a job Initializing until its RayCluster is ready (register a
    `RayClusterController` too).
    """

    resource = "rayjobs.ray.io"

    def __init__(
        self,
        start_after: float = 0.0,
        run_for: float = 0.0,
        *,
        fail: bool = False,
        fail_when: Callable[[JSON], bool] | None = None,
        failure_message: str = DEFAULT_FAILURE,
        wait_for_cluster: bool = False,
        logs: _sim_pods.LogSource | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock)
        output = logs if logs is not None else (lambda job, pod: [])
        self.pods = _sim_pods.PodRunner(
            None, lambda job, pod: [*submit_header(job), *output(job, pod)]
        )
        check_delay("start_after", start_after)
        check_delay("run_for", run_for)
        self.start_after = start_after
        self.run_for = run_for
        self.fail = fail
        self.fail_when = fail_when
        self.failure_message = failure_message
        self.wait_for_cluster = wait_for_cluster
        self._running_since: dict[str, float] = {}
        self._ended_at: dict[str, float] = {}
        self._stopping: dict[str, float] = {}

    # -- the state machine ----------------------------------------------------------------------

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        uid = str(obj["metadata"]["uid"])
        status = obj.get("status") or {}
        state = status.get("jobDeploymentStatus") or "New"
        finalizers = list(obj["metadata"].get("finalizers") or [])
        if state == "New" and FINALIZER not in finalizers:
            meta = obj["metadata"]
            patch = {"metadata": {"finalizers": [*finalizers, FINALIZER]}}
            cluster.patch(self.name(cluster), meta["name"], patch, meta.get("namespace"))
            return  # KubeRay returns after adding it and goes on at the next reconcile
        if state in ("Complete", "Failed"):
            self._maybe_shut_down(cluster, obj)
            return
        if is_suspended(obj):
            self._suspend(cluster, obj, state)
            return
        if state == "Suspended":
            self.restart_schedule(obj)
            self._running_since.pop(uid, None)
            self.write_status(cluster, obj, {**_RESET, "jobDeploymentStatus": "New"})
            return
        if state in ("New", "Suspending"):
            self._initialize(cluster, obj)
            return
        cluster_obj = self._cluster(cluster, obj)
        if state == "Initializing":
            ready = cluster_obj is not None and (
                not self.wait_for_cluster
                or (cluster_obj.get("status") or {}).get("state") == "ready"
            )
            if ready and since >= self.start_after:
                self._running_since[uid] = self.clock()
                self.write_status(cluster, obj, self._running(obj, cluster_obj, "PENDING"))
                self.pods.ensure(cluster, submitter_pods(obj))
            return
        running_for = self.clock() - self._running_since.setdefault(uid, self.clock())
        if status.get("jobStatus") == "PENDING":
            running = self.write_status(cluster, obj, self._running(obj, cluster_obj, "RUNNING"))
            for pod in self.pods.ensure(cluster, submitter_pods(obj)):
                self.pods.start(cluster, running, pod)
        elif running_for >= runs_for(obj, self.run_for):
            self._finish(cluster, obj, cluster_obj)

    def _initialize(self, cluster: FakeCluster, obj: JSON) -> None:
        meta, spec = obj["metadata"], obj.get("spec") or {}
        uid, name = str(meta["uid"]), str(meta["name"])
        selector = spec.get("clusterSelector") or {}
        if selector.get(CLUSTER_LABEL):
            cluster_name = str(selector[CLUSTER_LABEL])
        else:
            attempt = str(self.clock())
            cluster_name = f"{name}-{suffix(uid, 'cluster', attempt)}"
            self._create_cluster(cluster, obj, cluster_name)
        self.write_status(
            cluster,
            obj,
            {
                **_RESET,
                "jobDeploymentStatus": "Initializing",
                "jobId": f"{name}-{suffix(uid, 'job', str(self.clock()))}",
                "rayClusterName": cluster_name,
                "startTime": timestamp(),
                "observedGeneration": meta.get("generation"),
            },
        )

    def _create_cluster(self, cluster: FakeCluster, obj: JSON, name: str) -> None:
        meta, spec = obj["metadata"], obj.get("spec") or {}
        if not spec.get("rayClusterSpec"):
            return
        rt = cluster.resource("rayclusters.ray.io")
        cluster.create(
            {
                "apiVersion": rt.api_version(rt.storage_version),
                "kind": "RayCluster",
                "metadata": {
                    "name": name,
                    "namespace": meta.get("namespace"),
                    "labels": {
                        "ray.io/originated-from-crd": "RayJob",
                        "ray.io/originated-from-cr-name": meta["name"],
                    },
                    "ownerReferences": [owner_reference(obj)],
                },
                "spec": spec["rayClusterSpec"],
            }
        )

    def _running(self, obj: JSON, cluster_obj: JSON | None, job_status: str) -> JSON:
        ns = obj["metadata"].get("namespace")
        cluster_status = dict((cluster_obj or {}).get("status") or {})
        head = cluster_status.get("head") or {}
        service = (
            head.get("serviceName")
            or f"{(cluster_obj or {}).get('metadata', {}).get('name')}-head-svc"
        )
        return {
            "jobDeploymentStatus": "Running",
            "jobStatus": job_status,
            "dashboardURL": f"{service}.{ns}.svc.cluster.local:8265",
            "rayClusterStatus": cluster_status or None,
            "observedGeneration": obj["metadata"].get("generation"),
        }

    def _finish(self, cluster: FakeCluster, obj: JSON, cluster_obj: JSON | None) -> None:
        failed = fails(obj, self.fail, self.fail_when)
        now = timestamp()
        status = obj.get("status") or {}
        self._ended_at[str(obj["metadata"]["uid"])] = self.clock()
        footer = submit_footer(obj, self.failure_message if failed else None)
        for pod in self.pods.ensure(cluster, submitter_pods(obj)):
            self.pods.finish(cluster, pod, "Failed" if failed else "Succeeded", footer)
        self.write_status(
            cluster,
            obj,
            {
                "jobDeploymentStatus": "Failed" if failed else "Complete",
                "jobStatus": "FAILED" if failed else "SUCCEEDED",
                "endTime": now,
                "rayJobInfo": {"startTime": status.get("startTime", now), "endTime": now},
                "reason": "AppFailed" if failed else None,
                "message": self.failure_message if failed else None,
                "succeeded": 0 if failed else 1,
                "failed": 1 if failed else 0,
                "rayClusterStatus": (cluster_obj or {}).get("status") or None,
                "observedGeneration": obj["metadata"].get("generation"),
            },
        )

    def _suspend(self, cluster: FakeCluster, obj: JSON, state: str) -> None:
        if state in ("New", "Suspended"):
            self.write_status(cluster, obj, {"jobDeploymentStatus": "Suspended"})
        elif state != "Suspending":
            self.write_status(cluster, obj, {"jobDeploymentStatus": "Suspending"})
        else:
            self._delete_own_cluster(cluster, obj)
            self._delete_submitter(cluster, obj)
            self.write_status(cluster, obj, {**_RESET, "jobDeploymentStatus": "Suspended"})

    # -- the job's RayCluster -------------------------------------------------------------------

    def _cluster(self, cluster: FakeCluster, obj: JSON) -> JSON | None:
        name = (obj.get("status") or {}).get("rayClusterName")
        if not name:
            return None
        return cluster.get("rayclusters.ray.io", name, obj["metadata"].get("namespace"))

    def _owns(self, obj: JSON, cluster_obj: JSON) -> bool:
        refs = cluster_obj["metadata"].get("ownerReferences") or []
        return any(r.get("uid") == obj["metadata"]["uid"] for r in refs)

    def _delete_own_cluster(self, cluster: FakeCluster, obj: JSON) -> None:
        found = self._cluster(cluster, obj)
        if found is not None and self._owns(obj, found):
            delete_quietly(cluster, "rayclusters.ray.io", found)

    def _maybe_shut_down(self, cluster: FakeCluster, obj: JSON) -> None:
        spec = obj.get("spec") or {}
        if not spec.get("shutdownAfterJobFinishes"):
            return
        ended = self._ended_at.setdefault(str(obj["metadata"]["uid"]), self.clock())
        if self.clock() - ended >= float(spec.get("ttlSecondsAfterFinished") or 0):
            self._delete_own_cluster(cluster, obj)

    def finalize(self, cluster: FakeCluster, obj: JSON) -> None:
        """A deleted job: KubeRay first asks the cluster's Ray dashboard to stop a job that
        has not ended; FakeCluster runs no dashboard, so, as against a dashboard that does
        not answer, its client gives up after `STOP_TIMEOUT` seconds. Then the finalizer
        goes, whatever the answer (the cluster and submitter go with the job, as owned
        objects)."""
        meta = obj["metadata"]
        uid = str(meta["uid"])
        finalizers = list(meta.get("finalizers") or [])
        if FINALIZER not in finalizers:
            return
        ended = (obj.get("status") or {}).get("jobStatus") in TERMINAL
        asked = self._stopping.setdefault(uid, self.clock())
        if not ended and self.clock() - asked < STOP_TIMEOUT:
            return
        self._stopping.pop(uid, None)
        rest = {"metadata": {"finalizers": [f for f in finalizers if f != FINALIZER]}}
        cluster.patch(self.name(cluster), meta["name"], rest, meta.get("namespace"))

    def on_deleted(self, cluster: FakeCluster, obj: JSON) -> None:
        """Garbage-collect the job's own cluster, as ownerReferences would on a real cluster."""
        self._running_since.pop(str(obj["metadata"].get("uid")), None)
        self._ended_at.pop(str(obj["metadata"].get("uid")), None)
        self._delete_own_cluster(cluster, obj)
        self._delete_submitter(cluster, obj)

    # -- the submitter pod ----------------------------------------------------------------------

    def _delete_submitter(self, cluster: FakeCluster, obj: JSON) -> None:
        meta = obj["metadata"]
        self.pods.delete(cluster, meta.get("namespace"), {"job-name": meta["name"]})

    def after_tick(self, cluster: FakeCluster) -> None:
        self.pods.tick(cluster)


def submitter_pods(obj: JSON) -> list[JSON]:
    """The pod of KubeRay's submitter Job for a K8sJobMode RayJob (none in other modes)."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    if (spec.get("submissionMode") or "K8sJobMode") != "K8sJobMode":
        return []
    template = next(t for name, _, t in podsets.rayjob(spec) if name == "submitter")
    job_id = str((obj.get("status") or {}).get("jobId") or "")
    job_uid = _sim_pods.synthetic_uid(str(meta["uid"]), "submitter-job", job_id)
    return [
        _sim_pods.pod_from_template(
            str(meta.get("namespace")),
            f"{meta['name']}-{suffix(str(meta['uid']), 'submitter', job_id)}",
            template,
            _sim_pods.job_labels(str(meta["name"]), job_uid),
            _sim_pods.job_owner(str(meta["name"]), job_uid),
            "rayproject/ray",
        )
    ]


def submit_header(job: JSON) -> list[str]:
    """What `ray job submit` prints before the job's own output."""
    status = job.get("status") or {}
    job_id, rule = status.get("jobId", ""), "-" * 55
    return [
        f"Job submission server address: http://{status.get('dashboardURL', '')}",
        "",
        rule,
        f"Job '{job_id}' submitted successfully",
        rule,
        "",
        "Next steps",
        "  Query the logs of the job:",
        f"    ray job logs {job_id}",
        "  Query the status of the job:",
        f"    ray job status {job_id}",
        "  Request the job to be stopped:",
        f"    ray job stop {job_id}",
        "",
        "Tailing logs until the job exits (disable with --no-wait):",
    ]


def submit_footer(job: JSON, failure: str | None) -> list[str]:
    """What `ray job submit` prints once the job has ended."""
    job_id, rule = (job.get("status") or {}).get("jobId", ""), "-" * 40
    if failure is None:
        return ["", rule, f"Job '{job_id}' succeeded", rule]
    return ["", rule, f"Job '{job_id}' failed", rule, f"Status message: {failure}"]
