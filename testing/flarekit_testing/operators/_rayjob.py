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

import copy
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import yaml

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
    from flarekit_testing.local import LocalKubelet, LocalRay

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
        local: bool | LocalKubelet = False,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock)
        self.pods = _sim_pods.PodRunner(logs, submitter_notes, _sim_pods.kubelet_for(local))
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
        if state == "New" and FINALIZER not in (obj["metadata"].get("finalizers") or []):
            self._set_finalizer(cluster, obj, True)
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
        if self.pods.local is not None:
            self._reconcile_local(cluster, obj, state, cluster_obj)
            return
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

    # -- local execution: the job runs on the cluster's local Ray ------------------------------

    def _reconcile_local(
        self, cluster: FakeCluster, obj: JSON, state: str, cluster_obj: JSON | None
    ) -> None:
        """As KubeRay does it: once the cluster is ready, submit the job (the submitter pod's
        ``ray job submit`` in K8sJobMode, the Jobs API otherwise), then report what the
        cluster's dashboard says of it until it ends."""
        assert self.pods.local is not None
        ray = self.pods.local.ray
        status = obj.get("status") or {}
        ns = str(obj["metadata"]["namespace"])
        if cluster_obj is None or (cluster_obj.get("status") or {}).get("state") != "ready":
            return
        cluster_name = str(cluster_obj["metadata"]["name"])
        job_id = str(status.get("jobId") or "")
        k8s_mode = (obj.get("spec") or {}).get("submissionMode", "K8sJobMode") == "K8sJobMode"
        if state == "Initializing":
            running = self.write_status(cluster, obj, self._running(obj, cluster_obj, "PENDING"))
            if k8s_mode:
                for pod in self.pods.ensure(cluster, submitter_pods(running)):
                    self.pods.start(cluster, running, pod)
            else:
                self._submit(ray, ns, cluster_name, running)
            return
        submitter = self.pods.owned(cluster, ns, {"job-name": obj["metadata"]["name"]})
        phases = {(p.get("status") or {}).get("phase") for p in submitter}
        if k8s_mode and "Failed" in phases:
            message = "the submitter pod failed: see its log (job.logs())"
            self._end_local(cluster, obj, cluster_obj, "FAILED", message, "SubmissionFailed")
            return
        info = ray.job_info(ns, cluster_name, job_id)
        job_status = str((info or {}).get("status") or "PENDING")
        # In K8sJobMode the job ends once its submitter has also finished (it follows the logs).
        finished = not k8s_mode or (bool(submitter) and phases <= {"Succeeded", "Failed"})
        if job_status in ("PENDING", "RUNNING") or not finished:
            if status.get("jobStatus") != job_status:
                self.write_status(cluster, obj, self._running(obj, cluster_obj, job_status))
            return
        message = str((info or {}).get("message") or "")
        self._end_local(cluster, obj, cluster_obj, job_status, message, "AppFailed")

    def _submit(self, ray: LocalRay, namespace: str, cluster_name: str, obj: JSON) -> None:
        """HTTPMode: KubeRay submits through the dashboard's Jobs API."""
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        body: JSON = {
            "entrypoint": str(spec.get("entrypoint") or ""),
            "submission_id": status.get("jobId"),
        }
        runtime_env = spec.get("runtimeEnvYAML")
        if runtime_env:
            body["runtime_env"] = yaml.safe_load(runtime_env)
        if spec.get("metadata"):
            body["metadata"] = dict(spec["metadata"])
        ray.submit_job(namespace, cluster_name, body)

    def _end_local(
        self,
        cluster: FakeCluster,
        obj: JSON,
        cluster_obj: JSON,
        job_status: str,
        message: str,
        reason: str,
    ) -> None:
        failed = job_status == "FAILED"  # a STOPPED job is Complete, as KubeRay reports it
        now = timestamp()
        status = obj.get("status") or {}
        self._ended_at[str(obj["metadata"]["uid"])] = self.clock()
        self.write_status(
            cluster,
            obj,
            {
                "jobDeploymentStatus": "Failed" if failed else "Complete",
                "jobStatus": job_status,
                "endTime": now,
                "rayJobInfo": {"startTime": status.get("startTime", now), "endTime": now},
                "reason": reason if failed else None,
                "message": message if failed else None,
                "succeeded": 0 if failed else 1,
                "failed": 1 if failed else 0,
                "rayClusterStatus": (cluster_obj or {}).get("status") or None,
                "observedGeneration": obj["metadata"].get("generation"),
            },
        )

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
        footer = ending_note(obj, self.failure_message if failed else None)
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
            self.stop_job(cluster, obj)
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

    def _set_finalizer(self, cluster: FakeCluster, obj: JSON, present: bool) -> JSON:
        """KubeRay's finalizer on a RayJob (added when it is new, removed once it is deleted
        and its Ray job stopped)."""
        meta = obj["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        if present:
            finalizers.append(FINALIZER)
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
        return cluster.patch(self.name(cluster), meta["name"], patch, meta.get("namespace"))

    def finalize(self, cluster: FakeCluster, obj: JSON) -> None:
        """A deleted job: KubeRay first asks the cluster's Ray dashboard to stop a job that
        has not ended. On a local Ray cluster that is done for real; on a simulated one no
        dashboard answers, so, as KubeRay's client against a dashboard that does not answer,
        it gives up after `STOP_TIMEOUT` seconds. Then its cluster and submitter go, then the
        finalizer."""
        meta = obj["metadata"]
        if FINALIZER not in (meta.get("finalizers") or []):
            return
        uid = str(meta["uid"])
        ended = (obj.get("status") or {}).get("jobStatus") in TERMINAL
        if not ended and not self._runs_locally(obj):
            asked = self._stopping.setdefault(uid, self.clock())
            if self.clock() - asked < STOP_TIMEOUT:
                return
        self._stopping.pop(uid, None)
        self.stop_job(cluster, obj)
        self._delete_own_cluster(cluster, obj)
        self._delete_submitter(cluster, obj)
        self._set_finalizer(cluster, obj, False)

    def _runs_locally(self, obj: JSON) -> bool:
        status = obj.get("status") or {}
        return bool(
            self.pods.local is not None and status.get("jobId") and status.get("rayClusterName")
        )

    def stop_job(self, cluster: FakeCluster, obj: JSON) -> None:
        """Stop the job's Ray job, when it runs on a local Ray cluster (nothing runs in a
        simulated one)."""
        status = obj.get("status") or {}
        local = self.pods.local
        if local is None or not self._runs_locally(obj) or status.get("jobStatus") in TERMINAL:
            return
        ns = str(obj["metadata"]["namespace"])
        local.ray.stop_job(ns, str(status["rayClusterName"]), str(status["jobId"]))

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


def submit_command(obj: JSON) -> list[str]:
    """The shell command KubeRay's submitter runs (``GetK8sJobCommand``): submit the job
    unless the dashboard knows it, then follow its logs."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    address = str(status.get("dashboardURL") or "")
    if not address.startswith("http://"):
        address = f"http://{address}"
    job_id = str(status.get("jobId") or "")
    command = ["if", "!", "ray", "job", "status", "--address", address, job_id, ">/dev/null",
               "2>&1", ";", "then", "ray", "job", "submit", "--address", address, "--no-wait"]  # fmt: skip
    runtime_env = spec.get("runtimeEnvYAML")
    if runtime_env:
        command += ["--runtime-env-json", json.dumps(json.dumps(yaml.safe_load(runtime_env)))]
    if spec.get("metadata"):
        command += ["--metadata-json", json.dumps(json.dumps(dict(spec["metadata"])))]
    if job_id:
        command += ["--submission-id", job_id]
    for key, flag in (("entrypointNumCpus", "--entrypoint-num-cpus"),
                      ("entrypointNumGpus", "--entrypoint-num-gpus")):  # fmt: skip
        if spec.get(key):
            command += [flag, f"{float(spec[key]):f}"]
    if spec.get("entrypointResources"):
        command += ["--entrypoint-resources", json.dumps(str(spec["entrypointResources"]))]
    entrypoint = str(spec.get("entrypoint") or "").strip()
    command += ["--", entrypoint, ";", "fi", ";", "ray", "job", "logs", "--address", address,
                "--follow", job_id]  # fmt: skip
    return command


def submitter_pods(obj: JSON) -> list[JSON]:
    """The pod of KubeRay's submitter Job for a K8sJobMode RayJob (none in other modes),
    with the command and environment KubeRay gives its container."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    if (spec.get("submissionMode") or "K8sJobMode") != "K8sJobMode":
        return []
    template = copy.deepcopy(next(t for name, _, t in podsets.rayjob(spec) if name == "submitter"))
    container = ((template.setdefault("spec", {}).get("containers")) or [{}])[0]
    status = obj.get("status") or {}
    if not container.get("command"):
        container["command"] = ["/bin/bash", "-ce", "--"]
        container["args"] = [" ".join(submit_command(obj))]
    container["env"] = [
        *(container.get("env") or []),
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "RAY_DASHBOARD_ADDRESS", "value": str(status.get("dashboardURL") or "")},
        {"name": "RAY_JOB_SUBMISSION_ID", "value": str(status.get("jobId") or "")},
    ]
    job_id = str(status.get("jobId") or "")
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


def submitter_notes(job: JSON, pod: JSON) -> list[str]:
    """What a simulated submitter pod prints: that nothing was submitted or run."""
    entrypoint = str((job.get("spec") or {}).get("entrypoint") or "").strip()
    name = job["metadata"]["name"]
    return [
        f"RayJob {name}: KubeRay's submitter pod is simulated; no Ray cluster runs, so the "
        f"entrypoint {entrypoint!r} was not submitted and printed nothing",
    ]


def ending_note(job: JSON, failure: str | None) -> list[str]:
    """The simulated submitter's last line: how the simulation ended the job."""
    name = job["metadata"]["name"]
    if failure is None:
        return [f"RayJob {name}: the simulation reports it SUCCEEDED (nothing ran)"]
    return [f"RayJob {name}: the simulation reports it FAILED: {failure} (nothing ran)"]
