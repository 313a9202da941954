"""A simulated Kubeflow Trainer (v2) TrainJob controller: run, then Complete or Failed.

Trainer reports a TrainJob through conditions and `jobsStatus`, one entry per replicated job
of the runtime's JobSet. It copies the JobSet's terminal condition, so success is `Complete`
(reason `AllJobsCompleted`, "jobset completed successfully") and failure `Failed` (reason
`FailedJobs`). `spec.suspend: true` sets `Suspended` (reason `Suspended`); resuming sets it
False with reason `Resumed` and restarts the schedule. Trainer 2.x has no `Created` condition
(it was removed before 2.0), so none is written.

As Trainer does, it makes a JobSet of the TrainJob's name (owned by the TrainJob, one
replicated job per step of the runtime, suspended while the TrainJob is) where JobSets are
served; no JobSet controller runs here, so the JobSet has no status. While it runs, the job has
the pods JobSet would create: one indexed Job per replicated job of
the runtime (`<trainjob>-<replicated job>-0`), its pods labelled with JobSet's labels
(`jobset.sigs.k8s.io/jobset-name`, `jobset.sigs.k8s.io/replicatedjob-name`, ...) and the Job
controller's (`batch.kubernetes.io/job-completion-index`, `job-name`, ...). Trainer's
`trainer.kubeflow.org/trainjob-ancestor-step` sits on the runtime's Job templates, so it labels
the Jobs, not the pods. Initializer pods end Succeeded as soon as they start; trainer pods run
until the job ends, printing `logs=lambda job, pod: [...]` (a short default otherwise). Pods are
deleted on suspension and with the job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import quantity
from flarekit_testing.operators import _pods as _sim_pods
from flarekit_testing.operators import _podsets as podsets
from flarekit_testing.operators._base import (
    Clock,
    SimController,
    check_delay,
    condition,
    controller_owner,
    is_suspended,
    owner_reference,
    set_condition,
    suffix,
)
from flarekit_testing.operators._outcome import fails, runs_for

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster
    from flarekit_testing.local import LocalKubelet

JSON = dict[str, Any]

DEFAULT_FAILURE = "jobset failed due to one or more job failures"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
INITIALIZERS = ("dataset-initializer", "model-initializer")
JOBSETS = "jobsets.jobset.x-k8s.io"
#: The port Trainer's torch policy gives the trainer container (the rendezvous port).
TRAINER_PORT = 29500


class TrainJobController(SimController):
    """Runs TrainJobs for `run_for` seconds after creation (or resumption), then ends them.

    `fail=True` (or `fail_when(obj)` returning True) ends them Failed with `failure_message`.
    With `local` (True, or a `LocalKubelet` shared with other controllers) the pods run as
    local processes instead, and the job ends as they do: Complete when every trainer pod
    succeeded, Failed (the others stopped) when one failed.
    """

    resource = "trainjobs.trainer.kubeflow.org"

    def __init__(
        self,
        run_for: float = 0.0,
        *,
        fail: bool = False,
        fail_when: Callable[[JSON], bool] | None = None,
        failure_message: str = DEFAULT_FAILURE,
        logs: _sim_pods.LogSource | None = None,
        local: bool | LocalKubelet = False,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock)
        self.pods = _sim_pods.PodRunner(logs, default_logs, _sim_pods.kubelet_for(local))
        check_delay("run_for", run_for)
        self.run_for = run_for
        self.fail = fail
        self.fail_when = fail_when
        self.failure_message = failure_message

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        if any(_true(obj, t) for t in ("Complete", "Failed")):
            return
        generation = obj["metadata"].get("generation")
        conditions = list((obj.get("status") or {}).get("conditions") or [])
        jobs = [name for name, _, _ in podsets.trainjob(cluster, obj)]
        self._ensure_jobset(cluster, obj)
        if is_suspended(obj):
            self._delete_pods(cluster, obj)
            conditions = set_condition(
                conditions, "Suspended", True, "Suspended", "TrainJob is suspended", generation
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "suspended")}
            self.write_status(cluster, obj, status)
            return
        if _true(obj, "Suspended"):
            self.restart_schedule(obj)
            conditions = set_condition(
                conditions, "Suspended", False, "Resumed", "TrainJob is resumed", generation
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "active", ready=True)}
            self.write_status(cluster, obj, status)
            return
        pods = self.pods.ensure(cluster, jobset_pods(cluster, obj))
        for pod in pods:
            self.pods.start(cluster, obj, pod)
            if _labels(pod).get(REPLICATED_JOB_LABEL) in INITIALIZERS and self.pods.local is None:
                self.pods.finish(cluster, pod)  # simulated: nothing to initialize
        if self.pods.unscheduled(pods):  # no node takes them: the job waits, as it would
            self.write_status(cluster, obj, {"jobsStatus": _jobs(jobs, "active")})
            return
        if self.pods.local is not None:
            self._end_when_processes_end(cluster, obj, pods, jobs, conditions, generation)
            return
        if since < runs_for(obj, self.run_for):
            self.write_status(cluster, obj, {"jobsStatus": _jobs(jobs, "active", ready=True)})
            return
        failed = fails(obj, self.fail, self.fail_when)
        for pod in self.pods.ensure(cluster, jobset_pods(cluster, obj)):
            trainer = _labels(pod).get(REPLICATED_JOB_LABEL) not in INITIALIZERS
            self.pods.finish(cluster, pod, "Failed" if failed and trainer else "Succeeded")
        if failed:
            conditions = set_condition(
                conditions, "Failed", True, "FailedJobs", self.failure_message, generation
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "failed")}
        else:
            conditions = set_condition(
                conditions,
                "Complete",
                True,
                "AllJobsCompleted",
                "jobset completed successfully",
                generation,
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "succeeded")}
        self.write_status(cluster, obj, status)

    def _end_when_processes_end(
        self,
        cluster: FakeCluster,
        obj: JSON,
        pods: list[JSON],
        jobs: list[str],
        conditions: list[JSON],
        generation: Any,
    ) -> None:
        """Local execution: the job runs while its trainer processes do."""
        current = {
            p["metadata"]["name"]: cluster.get(
                "pods", p["metadata"]["name"], p["metadata"]["namespace"]
            )
            for p in pods
            if _labels(p).get(REPLICATED_JOB_LABEL) not in INITIALIZERS
        }
        phases = {name: (pod or {}).get("status", {}).get("phase") for name, pod in current.items()}
        failed = sorted(name for name, phase in phases.items() if phase == "Failed")
        if failed:
            code = _exit_code(current[failed[0]] or {})
            message = f"pod {failed[0]} exited with code {code}"
            conditions = set_condition(
                conditions, "Failed", True, "FailedJobs", message, generation
            )
            for pod in pods:  # the other ranks are stopped, as JobSet's failure policy does
                self.pods.finish(cluster, pod, "Failed")
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "failed")}
        elif phases and all(phase == "Succeeded" for phase in phases.values()):
            conditions = set_condition(
                conditions, "Complete", True, "AllJobsCompleted",
                "jobset completed successfully", generation,
            )  # fmt: skip
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "succeeded")}
        else:
            status = {"jobsStatus": _jobs(jobs, "active", ready=True)}
        self.write_status(cluster, obj, status)

    def close(self) -> None:
        """End the processes of pods still running (local execution)."""
        if self.pods.local is not None:
            self.pods.local.close()

    def _ensure_jobset(self, cluster: FakeCluster, obj: JSON) -> None:
        """The TrainJob's JobSet, its `suspend` following the TrainJob's."""
        try:
            rt = cluster.resource(JOBSETS)
        except ValueError:  # JobSet is not installed here
            return
        meta = obj["metadata"]
        suspend = is_suspended(obj)
        current = cluster.get(JOBSETS, meta["name"], meta["namespace"])
        if current is not None:
            if bool((current.get("spec") or {}).get("suspend")) != suspend:
                patch = {"spec": {"suspend": suspend}}
                cluster.patch(JOBSETS, meta["name"], patch, meta["namespace"])
            return
        replicated = [
            {
                "name": job,
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": count,
                        "completions": count,
                        "completionMode": "Indexed",
                        "template": template,
                    }
                },
            }
            for job, count, template in podsets.trainjob(cluster, obj)
        ]
        cluster.create(
            {
                "apiVersion": rt.api_version(rt.storage_version),
                "kind": "JobSet",
                "metadata": {
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "ownerReferences": [owner_reference(obj)],
                },
                "spec": {"replicatedJobs": replicated, "suspend": suspend},
            }
        )

    def _delete_pods(self, cluster: FakeCluster, obj: JSON) -> None:
        meta = obj["metadata"]
        self.pods.delete(cluster, meta["namespace"], {JOBSET_LABEL: meta["name"]})

    def on_deleted(self, cluster: FakeCluster, obj: JSON) -> None:
        """Remove the job's JobSet and pods, as the garbage collector would."""
        self._delete_pods(cluster, obj)
        meta = obj["metadata"]
        try:
            found = cluster.get(JOBSETS, meta["name"], meta["namespace"])
        except ValueError:
            return
        if found is not None and controller_owner(found) == owner_reference(obj):
            cluster.delete(JOBSETS, meta["name"], meta["namespace"])

    def after_tick(self, cluster: FakeCluster) -> None:
        self.pods.tick(cluster)


def jobset_pods(cluster: FakeCluster, obj: JSON) -> list[JSON]:
    """The pods of the TrainJob's JobSet: per replicated job one indexed Job, `count` pods."""
    meta = obj["metadata"]
    name, namespace = str(meta["name"]), str(meta["namespace"])
    trainer = (obj.get("spec") or {}).get("trainer") or {}
    jobset_uid = _sim_pods.synthetic_uid(str(meta["uid"]), "jobset")
    sets = podsets.trainjob(cluster, obj)
    out = []
    for global_index, (job, count, template) in enumerate(sets):
        job_name = f"{name}-{job}-0"
        job_uid = _sim_pods.synthetic_uid(jobset_uid, job_name)
        if job == "node":
            template = _with_trainer(
                template, trainer, _torch_env(cluster, obj, count, name, template)
            )
        for index in range(count):
            labels = {
                JOBSET_LABEL: name,
                REPLICATED_JOB_LABEL: job,
                "jobset.sigs.k8s.io/replicatedjob-replicas": "1",
                "jobset.sigs.k8s.io/job-index": "0",
                "jobset.sigs.k8s.io/job-global-index": str(global_index),
                "jobset.sigs.k8s.io/restart-attempt": "0",
                "jobset.sigs.k8s.io/jobset-uid": jobset_uid,
                INDEX_LABEL: str(index),
                **_sim_pods.job_labels(job_name, job_uid),
            }
            pod = _sim_pods.pod_from_template(
                namespace,
                f"{job_name}-{index}-{suffix(str(meta['uid']), job, str(index))}",
                template,
                labels,
                _sim_pods.job_owner(job_name, job_uid),
            )
            pod["metadata"].setdefault("annotations", {})[INDEX_LABEL] = str(index)
            _add_completion_index(pod)
            pod["spec"].setdefault("hostname", f"{job_name}-{index}")  # as JobSet names them
            pod["spec"].setdefault("subdomain", name)
            out.append(pod)
    return out


def _upsert_env(env: list[JSON], more: list[JSON]) -> list[JSON]:
    """Trainer's ``UpsertEnvVars``: a variable already there is replaced in place, a new one
    appended."""
    out = [dict(e) for e in env]
    for item in more:
        found = next((i for i, e in enumerate(out) if e.get("name") == item.get("name")), None)
        if found is None:
            out.append(dict(item))
        else:
            out[found] = dict(item)
    return out


def _with_trainer(template: JSON, trainer: JSON, torch_env: list[JSON]) -> JSON:
    """The `node` container as Trainer overrides it: image, command and args of
    `spec.trainer`, its env upserted, then the torch policy's ``PET_*`` variables, and the
    trainer port (29500) the policy opens for the JobSet's headless Service."""
    spec = dict(template.get("spec") or {})
    containers = []
    for container in spec.get("containers") or []:
        if container.get("name") == "node":
            container = dict(container)
            for key in ("image", "command", "args"):
                if trainer.get(key):
                    container[key] = trainer[key]
            env = _upsert_env(container.get("env") or [], trainer.get("env") or [])
            env = _upsert_env(env, torch_env)
            if env:
                container["env"] = env
            if torch_env:
                ports = [dict(p) for p in container.get("ports") or []]
                if not any(p.get("containerPort") == TRAINER_PORT for p in ports):
                    ports.append({"containerPort": TRAINER_PORT})
                container["ports"] = ports
        containers.append(container)
    spec["containers"] = containers
    return {**template, "spec": spec}


def _add_completion_index(pod: JSON) -> None:
    """What the Job controller gives every container of an Indexed Job's pod."""
    index_ref = f"metadata.annotations['{INDEX_LABEL}']"
    var = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {"fieldPath": index_ref}}}
    for key in ("initContainers", "containers"):
        for container in pod["spec"].get(key) or []:
            if not any(e.get("name") == var["name"] for e in container.get("env") or []):
                container["env"] = [*(container.get("env") or []), var]


def _procs_per_node(trainer: JSON, template: JSON) -> str:
    """Trainer 2.3's `numProcPerNode`: the TrainJob's, else `auto`, which without GPUs is the
    node's whole CPUs (at least 1)."""
    if trainer.get("numProcPerNode"):
        return str(trainer["numProcPerNode"])
    resources = trainer.get("resourcesPerNode")
    if resources is None:
        containers = (template.get("spec") or {}).get("containers") or []
        node: JSON = next((c for c in containers if c.get("name") == "node"), {})
        resources = node.get("resources") or {}
    amounts = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    if any("gpu" in str(name) for name in amounts):
        return "auto"
    cpu = (resources.get("requests") or {}).get("cpu") or (resources.get("limits") or {}).get("cpu")
    whole = int(quantity.parse(cpu)) if cpu is not None else 0
    return str(max(1, whole))


def _torch_env(
    cluster: FakeCluster, obj: JSON, nodes: int, name: str, template: JSON | None = None
) -> list[JSON]:
    """The variables Trainer's torch policy gives every node (torchrun reads them)."""
    runtime = podsets.runtime_of(cluster, obj) or {}
    policy = (runtime.get("spec") or {}).get("mlPolicy") or {}
    if "torch" not in policy:
        return []
    trainer = (obj.get("spec") or {}).get("trainer") or {}
    procs = _procs_per_node(trainer, template or {})
    index_ref = f"metadata.annotations['{INDEX_LABEL}']"
    return [
        {"name": "PET_NNODES", "value": str(nodes)},
        {"name": "PET_NPROC_PER_NODE", "value": procs},
        {
            "name": "PET_NODE_RANK",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": index_ref}},
        },
        {"name": "PET_MASTER_ADDR", "value": f"{name}-node-0-0.{name}"},
        {"name": "PET_MASTER_PORT", "value": str(TRAINER_PORT)},
    ]


def _exit_code(pod: JSON) -> object:
    for entry in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (entry.get("state") or {}).get("terminated")
        if terminated:
            return terminated.get("exitCode")
    return "unknown"


def _labels(pod: JSON) -> dict[str, str]:
    return dict(pod["metadata"].get("labels") or {})


def default_logs(job: JSON, pod: JSON) -> list[str]:
    """A few lines naming the job and node, so tests can tell pods' logs apart (marked as
    simulated when written)."""
    labels = _labels(pod)
    step, index = labels.get(REPLICATED_JOB_LABEL, ""), labels.get(INDEX_LABEL, "0")
    name = job["metadata"]["name"]
    if step in INITIALIZERS:
        return [f"{step} of TrainJob {name}: done; nothing ran"]
    return [
        f"TrainJob {name} {step} {index}: started; its command does not run here",
        f"TrainJob {name} {step} {index}: done; nothing ran",
    ]


def _true(obj: JSON, type_: str) -> bool:
    found = condition(obj, type_)
    return found is not None and found.get("status") == "True"


def _jobs(names: list[str], counter: str, ready: bool = False) -> list[JSON]:
    """One `jobsStatus` entry per replicated job, its one job counted under `counter`."""
    out = []
    for name in names:
        entry = {"name": name, "active": 0, "ready": 0, "succeeded": 0, "failed": 0, "suspended": 0}
        entry[counter] = 1
        if ready:
            entry["ready"] = 1
        out.append(entry)
    return out
