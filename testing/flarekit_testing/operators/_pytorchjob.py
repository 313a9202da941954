"""A simulated Kubeflow training operator (v1) PyTorchJob controller: pods, run, then an end.

The training operator reports a PyTorchJob through conditions (`Created`, `Running`,
`Succeeded`, `Failed`, and `Suspended` while `spec.runPolicy.suspend` is true) with reasons
`PyTorchJobCreated`, `PyTorchJobRunning`, ... and through `replicaStatuses` per replica type
(`active`, `succeeded`, `failed`, a `labelSelector` and, as the scale subresource reads it,
a `selector` string), with `startTime` and `completionTime`. When the job ends its `Running`
condition turns False.

Its pods are `<job>-master-0` and `<job>-worker-<i>`, labelled
`training.kubeflow.org/job-name`, `training.kubeflow.org/replica-type` (the replica type in
lower case), `training.kubeflow.org/replica-index`, `training.kubeflow.org/operator-name:
pytorchjob-controller`, and the master also `training.kubeflow.org/job-role: master`; they are
owned by the job, and their `pytorch` container gets the variables the operator sets
(`PYTHONUNBUFFERED`, `MASTER_PORT` / `PET_MASTER_PORT`, `MASTER_ADDR` / `PET_MASTER_ADDR`,
`WORLD_SIZE`, `RANK`, `PET_NODE_RANK`, `PET_NPROC_PER_NODE` when `nprocPerNode` is set,
`PET_NNODES`). They run until the job
ends, printing `logs=lambda job, pod: [...]` (a short default otherwise); suspension deletes
them, as does deleting the job. Under Kueue (`KueueController`) a queued job is created
suspended and runs once admitted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flarekit_testing.operators import _pods as _sim_pods
from flarekit_testing.operators._base import (
    Clock,
    SimController,
    check_delay,
    condition,
    owner_reference,
    set_condition,
    timestamp,
)
from flarekit_testing.operators._outcome import fails, runs_for

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster
    from flarekit_testing.local import LocalKubelet

JSON = dict[str, Any]

RESOURCE = "pytorchjobs.kubeflow.org"
JOB_NAME = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
JOB_ROLE = "training.kubeflow.org/job-role"
OPERATOR = "training.kubeflow.org/operator-name"
OPERATOR_NAME = "pytorchjob-controller"
CONTAINER = "pytorch"
DEFAULT_PORT = 23456
DEFAULT_FAILURE = "PyTorchJob failed because a master or worker pod failed"
#: Replica types in the order the operator numbers ranks (the master is rank 0).
ROLES = ("Master", "Worker")


def run_policy_suspended(obj: JSON) -> bool:
    """`spec.runPolicy.suspend`, where the training operator (and Kueue) suspend its jobs."""
    return bool(((obj.get("spec") or {}).get("runPolicy") or {}).get("suspend"))


class PyTorchJobController(SimController):
    """Runs PyTorchJobs for `run_for` seconds after creation (or resumption), then ends them.

    `fail=True` (or `fail_when(obj)` returning True) ends them Failed with `failure_message`
    (the master pod Failed, the others Succeeded). With `local` (True, or a shared
    `LocalKubelet`) the pods run as local processes and the job ends as they do: Succeeded
    when the master succeeded, Failed when a pod failed.
    """

    resource = RESOURCE

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
        check_delay("run_for", run_for)
        self.run_for = run_for
        self.fail = fail
        self.fail_when = fail_when
        self.failure_message = failure_message
        self.pods = _sim_pods.PodRunner(logs, default_logs, _sim_pods.kubelet_for(local))

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        if any(_true(obj, t) for t in ("Succeeded", "Failed")):
            return
        meta = obj["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        conditions = list((obj.get("status") or {}).get("conditions") or [])
        if condition(obj, "Created") is None:
            conditions = set_condition(
                conditions, "Created", True, "PyTorchJobCreated", f"PyTorchJob {name} is created."
            )
        if run_policy_suspended(obj):
            self.pods.delete(cluster, namespace, {JOB_NAME: name})
            if condition(obj, "Running") is not None:
                conditions = set_condition(
                    conditions, "Running", False, "PyTorchJobSuspended",
                    f"PyTorchJob {name} is suspended.",
                )  # fmt: skip
            conditions = set_condition(
                conditions, "Suspended", True, "PyTorchJobSuspended",
                f"PyTorchJob {name} is suspended.",
            )  # fmt: skip
            self._write(cluster, obj, conditions, _replica_statuses(obj, "active", 0))
            return
        if _true(obj, "Suspended"):
            self.restart_schedule(obj)
            conditions = set_condition(
                conditions,
                "Suspended",
                False,
                "PyTorchJobResumed",
                f"PyTorchJob {name} is resumed.",
            )
            self._write(cluster, obj, conditions, _replica_statuses(obj, "active", 0))
            return
        pods = self.pods.ensure(cluster, job_pods(obj))
        for pod in pods:
            self.pods.start(cluster, obj, pod)
        if self.pods.local is not None and not self.pods.unscheduled(pods):
            self._end_when_processes_end(cluster, obj, conditions)
            return
        if since < runs_for(obj, self.run_for) or self.pods.unscheduled(pods):
            conditions = set_condition(
                conditions, "Running", True, "PyTorchJobRunning",
                f"PyTorchJob {namespace}/{name} is running.",
            )  # fmt: skip
            extra = {} if (obj.get("status") or {}).get("startTime") else {"startTime": timestamp()}
            self._write(cluster, obj, conditions, _replica_statuses(obj, "active"), **extra)
            return
        self._finish(cluster, obj, conditions)

    def _end_when_processes_end(
        self, cluster: FakeCluster, obj: JSON, conditions: list[JSON]
    ) -> None:
        """Local execution: the job runs while its processes do."""
        meta = obj["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        current = [
            cluster.get("pods", p["metadata"]["name"], namespace) or p for p in job_pods(obj)
        ]
        phases = {p["metadata"]["name"]: (p.get("status") or {}).get("phase") for p in current}
        master = next((p for p in current if _labels(p).get(JOB_ROLE) == "master"), current[0])
        if any(phase == "Failed" for phase in phases.values()):
            for pod in current:  # the other replicas are stopped with the job
                self.pods.finish(cluster, pod, "Failed")
            self._finish(cluster, obj, conditions, failed=True, end_pods=False)
        elif phases.get(master["metadata"]["name"]) == "Succeeded":
            self._finish(cluster, obj, conditions, failed=False, end_pods=False)
        else:
            conditions = set_condition(
                conditions, "Running", True, "PyTorchJobRunning",
                f"PyTorchJob {namespace}/{name} is running.",
            )  # fmt: skip
            extra = {} if (obj.get("status") or {}).get("startTime") else {"startTime": timestamp()}
            self._write(cluster, obj, conditions, _replica_statuses(obj, "active"), **extra)

    def _finish(
        self,
        cluster: FakeCluster,
        obj: JSON,
        conditions: list[JSON],
        failed: bool | None = None,
        end_pods: bool = True,
    ) -> None:
        meta = obj["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        if failed is None:
            failed = fails(obj, self.fail, self.fail_when)
        for pod in self.pods.ensure(cluster, job_pods(obj)) if end_pods else []:
            master = (pod["metadata"].get("labels") or {}).get(JOB_ROLE) == "master"
            self.pods.finish(cluster, pod, "Failed" if failed and master else "Succeeded")
        if failed:
            reason, message = "PyTorchJobFailed", self.failure_message
            conditions = set_condition(conditions, "Running", False, reason, message)
            conditions = set_condition(conditions, "Failed", True, reason, message)
            replicas = _replica_statuses(obj, "succeeded")
            replicas.setdefault("Master", {}).update(succeeded=0, failed=1)
        else:
            reason = "PyTorchJobSucceeded"
            message = f"PyTorchJob {namespace}/{name} successfully completed."
            conditions = set_condition(conditions, "Running", False, reason, message)
            conditions = set_condition(conditions, "Succeeded", True, reason, message)
            replicas = _replica_statuses(obj, "succeeded")
        started = (obj.get("status") or {}).get("startTime") or timestamp()
        self._write(
            cluster, obj, conditions, replicas, startTime=started, completionTime=timestamp()
        )

    def _write(
        self,
        cluster: FakeCluster,
        obj: JSON,
        conditions: list[JSON],
        replicas: JSON,
        **extra: Any,
    ) -> None:
        status = {"conditions": conditions, "replicaStatuses": replicas, **extra}
        self.write_status(cluster, obj, {**status, "lastReconcileTime": timestamp()})

    def on_deleted(self, cluster: FakeCluster, obj: JSON) -> None:
        """Remove the job's pods, as garbage collection would."""
        meta = obj["metadata"]
        self.pods.delete(cluster, meta["namespace"], {JOB_NAME: meta["name"]})

    def after_tick(self, cluster: FakeCluster) -> None:
        self.pods.tick(cluster)


def _replicas(obj: JSON) -> list[tuple[str, int, JSON]]:
    """(replica type, count, pod template) in rank order."""
    specs = (obj.get("spec") or {}).get("pytorchReplicaSpecs") or {}
    order = [r for r in ROLES if r in specs] + sorted(r for r in specs if r not in ROLES)
    return [
        (role, int(specs[role].get("replicas", 1) or 0), dict(specs[role].get("template") or {}))
        for role in order
    ]


def _selector(name: str, role: str) -> JSON:
    return {JOB_NAME: name, OPERATOR: OPERATOR_NAME, REPLICA_TYPE: role.lower()}


def _replica_statuses(obj: JSON, counter: str, value: int | None = None) -> JSON:
    """Per replica type: every replica counted under `counter` (or `value` of them)."""
    name = obj["metadata"]["name"]
    out: JSON = {}
    for role, count, _ in _replicas(obj):
        labels = _selector(name, role)
        entry: JSON = {
            "labelSelector": {"matchLabels": labels},
            "selector": ",".join(f"{k}={v}" for k, v in labels.items()),
        }
        if value != 0:
            entry[counter] = count if value is None else value
        out[role] = entry
    return out


def job_pods(obj: JSON) -> list[JSON]:
    """The pods the training operator creates for a PyTorchJob, master first."""
    meta = obj["metadata"]
    name, namespace = str(meta["name"]), str(meta["namespace"])
    replicas = _replicas(obj)
    world = sum(count for _, count, _ in replicas)
    nproc = (obj.get("spec") or {}).get("nprocPerNode")
    master_addr = f"{name}-master-0" if any(r == "Master" for r, _, _ in replicas) else ""
    out, rank = [], 0
    for role, count, template in replicas:
        for index in range(count):
            labels = {**_selector(name, role), REPLICA_INDEX: str(index)}
            if role == "Master":
                labels[JOB_ROLE] = "master"
            address = master_addr or f"{name}-{role.lower()}-0"
            env = {  # in the operator's order
                "PYTHONUNBUFFERED": "1",
                "MASTER_PORT": str(_port(template)),
                "PET_MASTER_PORT": str(_port(template)),
                "MASTER_ADDR": address,
                "PET_MASTER_ADDR": address,
                "WORLD_SIZE": str(world * _procs(nproc)),
                "RANK": str(rank),
                "PET_NODE_RANK": str(rank),
            }
            if nproc is not None:
                env["PET_NPROC_PER_NODE"] = str(nproc)
            env["PET_NNODES"] = str(world)
            pod = _sim_pods.pod_from_template(
                namespace,
                f"{name}-{role.lower()}-{index}",
                _with_env(template, env),
                labels,
                owner_reference(obj),
            )
            out.append(pod)
            rank += 1
    return out


def _procs(nproc: object) -> int:
    """Processes per node as the operator counts them into WORLD_SIZE (1 unless a number)."""
    try:
        return int(str(nproc))
    except ValueError:
        return 1


def _port(template: JSON) -> int:
    for container in (template.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == "pytorchjob-port" and port.get("containerPort"):
                return int(port["containerPort"])
    return DEFAULT_PORT


def _with_env(template: JSON, env: dict[str, str]) -> JSON:
    spec = dict(template.get("spec") or {})
    containers = []
    for container in spec.get("containers") or []:
        if container.get("name") == CONTAINER:
            own = [e for e in container.get("env") or [] if e.get("name") not in env]
            container = {
                **container,
                "env": own + [{"name": k, "value": v} for k, v in env.items()],
            }
        containers.append(container)
    spec["containers"] = containers
    return {**template, "spec": spec}


def default_logs(job: JSON, pod: JSON) -> list[str]:
    """A few lines naming the job, replica type and index, so tests can tell pods apart."""
    labels = pod["metadata"].get("labels") or {}
    role, index = labels.get(REPLICA_TYPE, ""), labels.get(REPLICA_INDEX, "0")
    name = job["metadata"]["name"]
    return [
        f"PyTorchJob {name} {role} {index}: started; its command does not run here",
        f"PyTorchJob {name} {role} {index}: done; nothing ran",
    ]


def _labels(pod: JSON) -> dict[str, str]:
    return dict(pod["metadata"].get("labels") or {})


def _true(obj: JSON, type_: str) -> bool:
    found = condition(obj, type_)
    return found is not None and found.get("status") == "True"
