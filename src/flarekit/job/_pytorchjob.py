"""Training-operator PyTorchJobs (kubeflow.org/v1), alone or inside an AppWrapper.

Clusters that run the Kubeflow training operator (v1) instead of Trainer (v2) take the same
distributed job as a PyTorchJob: one ``Master`` and ``nodes - 1`` ``Worker`` replicas whose
container (named ``pytorch``, as the operator requires) runs the same ``torchrun`` command;
the operator sets the ``PET_*`` variables torchrun reads from ``nprocPerNode`` and the replica
counts. `PyTorchJobRun` follows such a job (or the AppWrapper around it): status from the
conditions, logs from the master pod, wait, delete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import flarekit.client
from flarekit._objects import labels_of, name_of
from flarekit._products import QUEUE_LABEL
from flarekit.job._job import KubeJob, NoPodYet
from flarekit.job._jobstate import JobState, JobStatus, condition_rows, true_condition
from flarekit.job._workload import set_workload_active
from flarekit_models.appwrapper import v1beta2 as appwrapper_v1beta2
from flarekit_models.core import v1 as core_v1
from flarekit_models.kubeflow import v1 as kubeflow_v1
from flarekit_models.meta import v1 as meta_v1

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit.client import Client
    from flarekit_models import KubeResource
    from flarekit_models.core.v1 import PodSpec
    from flarekit_models.kubeflow.v1 import PyTorchJob, RunPolicy
    from flarekit_models.meta.v1 import ObjectMeta

__all__ = [
    "CONTAINER",
    "PyTorchJobRun",
    "appwrapper_model",
    "appwrapper_status",
    "pytorchjob_model",
    "pytorchjob_status",
]

#: The container name the training operator looks for in a PyTorchJob.
CONTAINER = "pytorch"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"


def _replica(count: int, pod: PodSpec) -> kubeflow_v1.ReplicaSpec:
    return kubeflow_v1.ReplicaSpec(
        replicas=count, restart_policy="OnFailure", template=core_v1.PodTemplateSpec(spec=pod)
    )


def pytorchjob_model(
    *,
    name: str,
    namespace: str | None,
    labels: Mapping[str, str],
    nodes: int,
    procs_per_node: int,
    pod: PodSpec,
    run_policy: RunPolicy | None,
) -> kubeflow_v1.PyTorchJob:
    """A PyTorchJob of `nodes` pods (a Master and workers) with pod spec `pod`."""
    metadata = meta_v1.ObjectMeta(name=name)
    if namespace:
        metadata.namespace = namespace
    if labels:
        metadata.labels = dict(labels)
    replicas = {"Master": _replica(1, pod)}
    if nodes > 1:
        replicas["Worker"] = _replica(nodes - 1, pod)
    spec = kubeflow_v1.PyTorchJobSpec(
        nproc_per_node=str(procs_per_node), pytorch_replica_specs=replicas
    )
    if run_policy is not None:
        spec.run_policy = run_policy
    return kubeflow_v1.PyTorchJob(metadata=metadata, spec=spec)


def appwrapper_model(job: PyTorchJob, labels: Mapping[str, str]) -> appwrapper_v1beta2.AppWrapper:
    """`job` (a PyTorchJob) inside an AppWrapper that carries the Kueue `labels`; its pod
    sets are declared, so every AppWrapper release admits it the same way."""
    inner = job.to_dict()
    inner["metadata"] = {"name": name_of(job)}
    replicas = job.spec.pytorch_replica_specs if job.spec is not None else {}
    pod_sets = [
        appwrapper_v1beta2.PodSet(
            path=f"template.spec.pytorchReplicaSpecs.{kind}.template", replicas=spec.replicas
        )
        for kind, spec in replicas.items()
    ]
    metadata = meta_v1.ObjectMeta(name=name_of(job))
    if job.metadata is not None and job.metadata.namespace:
        metadata.namespace = job.metadata.namespace
    if labels:
        metadata.labels = dict(labels)
    component = appwrapper_v1beta2.Component(template=inner, pod_sets=pod_sets)
    return appwrapper_v1beta2.AppWrapper(
        metadata=metadata, spec=appwrapper_v1beta2.AppWrapperSpec(components=[component])
    )


def _where(meta: ObjectMeta | None) -> tuple[str, str]:
    return (meta.name or "", meta.namespace or "") if meta is not None else ("", "")


def pytorchjob_status(job: kubeflow_v1.PyTorchJob) -> JobStatus:
    """The training operator's conditions (Created, Running, Restarting, Suspended,
    Succeeded, Failed) read into a `JobStatus`; no status yet is `PENDING`."""
    conditions = job.status.conditions if job.status is not None else None
    state, found = JobState.PENDING, None
    for type_, each in (
        ("Failed", JobState.FAILED),
        ("Succeeded", JobState.SUCCEEDED),
        ("Suspended", JobState.SUSPENDED),
        ("Running", JobState.RUNNING),
        ("Restarting", JobState.RUNNING),
        ("Created", JobState.PENDING),
    ):
        found = true_condition(conditions, type_)
        if found is not None:
            state = each
            break
    counts = (job.status.replica_statuses if job.status is not None else None) or {}
    replicas = {
        kind: {
            k: v
            for k, v in (("active", c.active), ("succeeded", c.succeeded), ("failed", c.failed))
            if v is not None
        }
        for kind, c in counts.items()
    }
    name, namespace = _where(job.metadata)
    return JobStatus(
        kind="PyTorchJob",
        name=name,
        namespace=namespace,
        state=state,
        reason=(found.reason if found is not None else None) or "",
        message=(found.message if found is not None else None) or "",
        replicas=replicas,
        conditions=condition_rows(conditions),
    )


_PHASES = {
    "Succeeded": JobState.SUCCEEDED,
    "Failed": JobState.FAILED,
    "Running": JobState.RUNNING,
    "Resuming": JobState.PENDING,
    "Suspended": JobState.SUSPENDED,
    "Suspending": JobState.SUSPENDED,
    "Resetting": JobState.RUNNING,
}


def appwrapper_status(wrapper: appwrapper_v1beta2.AppWrapper) -> JobStatus:
    """An AppWrapper's phase as a `JobStatus`, with the message of its failing condition."""
    status = wrapper.status
    conditions = status.conditions if status is not None else None
    state = _PHASES.get((status.phase if status is not None else None) or "", JobState.PENDING)
    reason = message = ""
    if state is JobState.FAILED:
        failing = next(
            (c for c in conditions or () if c.type in ("Unhealthy", "ResourcesDeployed")), None
        )
        reason = (failing.reason if failing is not None else None) or "Failed"
        message = (failing.message if failing is not None else None) or ""
    name, namespace = _where(wrapper.metadata)
    return JobStatus(
        kind="AppWrapper", name=name, namespace=namespace, state=state, reason=reason,
        message=message, conditions=condition_rows(conditions),
    )  # fmt: skip


class PyTorchJobRun(KubeJob[JobStatus]):
    """A submitted PyTorchJob (or the AppWrapper holding it), with the `Job` methods."""

    def __init__(self, client: Client, name: str, namespace: str, *, wrapped: bool) -> None:
        self.client = client
        self.name = name
        self.namespace = namespace
        self.wrapped = wrapped

    def _model(self) -> type[KubeResource]:
        if self.wrapped:
            return appwrapper_v1beta2.AppWrapper

        return kubeflow_v1.PyTorchJob

    def _connection(self) -> tuple[Client, str]:
        return self.client, self.namespace

    def _status_of(self, obj: KubeResource) -> JobStatus:
        if isinstance(obj, appwrapper_v1beta2.AppWrapper):
            return appwrapper_status(obj)
        if isinstance(obj, kubeflow_v1.PyTorchJob):
            return pytorchjob_status(obj)
        raise TypeError(f"expected a PyTorchJob or an AppWrapper, got {type(obj).__name__}")

    def _log_pod(self) -> tuple[str, str | None]:
        """The master's pod and container."""
        selector = {JOB_NAME_LABEL: self.name, REPLICA_TYPE_LABEL: "master"}
        pods = flarekit.client.list_pods(self.client, self.namespace, selector)
        if not pods:
            raise NoPodYet(
                f"PyTorchJob {self.namespace}/{self.name} has no master pod yet; its state: "
                f"{self.status().state.value}"
            )
        return pods[0].name, CONTAINER

    def _pod_selectors(self, obj: KubeResource) -> list[Mapping[str, str]]:
        return [{JOB_NAME_LABEL: self.name}]

    def _made_for(self, obj: KubeResource) -> list[tuple[str, str]]:
        return [("PyTorchJob", self.name)] if self.wrapped else []

    def stop(self) -> JobStatus:
        """Stop the job and keep it; a finished job is left as it is. A job queued by Kueue
        is stopped through its Workload (see `flarekit.job._workload`); otherwise the
        PyTorchJob's ``spec.runPolicy.suspend`` (the AppWrapper's ``spec.suspend``) is set."""
        return self._switch(run=False)

    def resume(self) -> JobStatus:
        """Run a stopped job again (the reverse of `stop`)."""
        return self._switch(run=True)

    def _switch(self, *, run: bool) -> JobStatus:
        obj = self._fetch()
        current = self._status_of(obj)
        if current.finished:
            return current
        if labels_of(obj).get(QUEUE_LABEL):
            subject = f"{type(obj).__name__} {self.namespace}/{self.name}"
            set_workload_active(self.client, obj, active=run, subject=subject)
        else:
            patch: dict[str, JsonValue] = {"spec": {"suspend": not run}}
            if not self.wrapped:
                patch = {"spec": {"runPolicy": {"suspend": not run}}}
            self.client.patch(self._model(), self.name, patch, namespace=self.namespace)
        return self.status()

    def __repr__(self) -> str:
        kind = "AppWrapper" if self.wrapped else "PyTorchJob"
        return f"PyTorchJobRun({kind} {self.namespace}/{self.name})"
