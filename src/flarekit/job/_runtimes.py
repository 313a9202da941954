"""Kubeflow Trainer runtimes: what a TrainJob can be started from, summarised for people.

A TrainJob names a runtime (`runtimeRef`): a cluster-wide ``ClusterTrainingRuntime`` or a
namespaced ``TrainingRuntime`` that holds the JobSet template and the ML policy (torch, MPI, ...).
Users pick one by name; what they need to know is its framework, how many nodes and processes
it starts by default, the trainer image and which replicated job runs the trainer. `Runtime`
is that summary, read from the object as a plain dict so that runtimes of every Trainer
release (2.0 wrote ``numProcPerNode`` under ``torch``, 2.3 under the TrainJob) read alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from flarekit.client._client import Client

__all__ = [
    "ANCESTOR_LABEL",
    "FRAMEWORK_LABEL",
    "Runtime",
    "RuntimeKind",
    "get_runtime",
    "list_runtimes",
    "runtime_from_dict",
]

RuntimeKind = Literal["ClusterTrainingRuntime", "TrainingRuntime"]
#: The label a runtime carries to say which ML framework it runs.
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
#: The label that marks the replicated job whose pods the TrainJob's `trainer` fills in.
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
#: The ML policies Trainer knows, in the order a runtime is checked for them.
_POLICIES = ("torch", "mpi", "jax", "xgboost", "flux")
_TRAINER_JOB = "node"


@dataclass(frozen=True)
class Runtime:
    """One training runtime as a TrainJob sees it.

    `policy` is the ML policy (``torch``, ``mpi``, ``jax``, ``xgboost``, ``flux``, or
    ``plain`` without one); `num_nodes` / `num_proc_per_node` are the runtime's defaults
    (None when it sets none); `trainer_job` and `trainer_container` name where the trainer
    runs (``node`` / ``node`` in the upstream runtimes); `gang` is the pod-group policy
    (``coscheduling``, ``volcano``) when the runtime schedules its pods all at once.
    """

    name: str
    kind: RuntimeKind
    namespace: str | None = None
    framework: str | None = None
    policy: str = "plain"
    num_nodes: int | None = None
    num_proc_per_node: int | str | None = None
    image: str | None = None
    trainer_job: str = _TRAINER_JOB
    trainer_container: str = _TRAINER_JOB
    replicated_jobs: tuple[str, ...] = ()
    containers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    gang: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> dict[str, str]:
        """The TrainJob `spec.runtimeRef` that points at this runtime."""
        return {"apiGroup": "trainer.kubeflow.org", "kind": self.kind, "name": self.name}

    def summary(self) -> str:
        """One line: name, kind, policy, nodes x processes, image."""
        shape = f"{self.num_nodes or '?'}x{self.num_proc_per_node or 'auto'}"
        where = f"{self.namespace}/" if self.namespace else ""
        image = f" image={self.image}" if self.image else ""
        return f"{where}{self.name} ({self.kind}, {self.policy}, nodes x procs {shape}){image}"


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _jobs(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    jobs = _dig(spec, "template", "spec", "replicatedJobs") or []
    return [j for j in jobs if isinstance(j, Mapping)]


def _pod_containers(job: Mapping[str, Any]) -> tuple[str, ...]:
    containers = _dig(job, "template", "spec", "template", "spec", "containers") or []
    return tuple(str(c.get("name")) for c in containers if isinstance(c, Mapping))


def _trainer(jobs: list[Mapping[str, Any]]) -> tuple[str, str, str | None]:
    """(job, container, image) of the trainer: the job labelled as the trainer's ancestor
    (else one named ``node``), its container named ``node`` (else its first)."""
    chosen = next(
        (j for j in jobs if _dig(j, "template", "metadata", "labels", ANCESTOR_LABEL) == "trainer"),
        next((j for j in jobs if j.get("name") == _TRAINER_JOB), None),
    )
    if chosen is None:
        return _TRAINER_JOB, _TRAINER_JOB, None
    containers = _dig(chosen, "template", "spec", "template", "spec", "containers") or [{}]
    container = next((c for c in containers if c.get("name") == _TRAINER_JOB), containers[0])
    return (
        str(chosen.get("name") or _TRAINER_JOB),
        str(container.get("name") or _TRAINER_JOB),
        container.get("image"),
    )


def runtime_from_dict(obj: Mapping[str, Any]) -> Runtime:
    """The `Runtime` summary of a ClusterTrainingRuntime or TrainingRuntime (Kubernetes JSON)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    ml = spec.get("mlPolicy") or {}
    policy = next((p for p in _POLICIES if ml.get(p) is not None), "plain")
    per_node = _dig(ml, policy, "numProcPerNode") if policy in ("torch", "mpi", "flux") else None
    jobs = _jobs(spec)
    job, container, image = _trainer(jobs)
    gang_policy = spec.get("podGroupPolicy") or {}
    gang = next((k for k in ("coscheduling", "volcano") if gang_policy.get(k) is not None), None)
    details: dict[str, Any] = {}
    if policy == "mpi":
        for key in ("mpiImplementation", "sshAuthMountPath", "runLauncherAsNode"):
            if _dig(ml, "mpi", key) is not None:
                details[key] = ml["mpi"][key]
    elastic = _dig(ml, "torch", "elasticPolicy")
    if isinstance(elastic, Mapping):
        details["elasticPolicy"] = dict(elastic)
    kind: RuntimeKind = (
        "TrainingRuntime" if obj.get("kind") == "TrainingRuntime" else "ClusterTrainingRuntime"
    )
    return Runtime(
        name=str(meta.get("name") or ""),
        kind=kind,
        namespace=meta.get("namespace") if kind == "TrainingRuntime" else None,
        framework=(meta.get("labels") or {}).get(FRAMEWORK_LABEL),
        policy=policy,
        num_nodes=ml.get("numNodes"),
        num_proc_per_node=per_node,
        image=image,
        trainer_job=job,
        trainer_container=container,
        replicated_jobs=tuple(str(j.get("name")) for j in jobs),
        containers={str(j.get("name")): _pod_containers(j) for j in jobs},
        gang=gang,
        details=details,
    )


def list_runtimes(client: Client, namespace: str | None = None) -> list[Runtime]:
    """The TrainingRuntimes of `namespace` (the client's by default), then every
    ClusterTrainingRuntime, each sorted by name."""
    from flarekit_models.trainer.v1alpha1 import ClusterTrainingRuntime, TrainingRuntime

    local = [
        runtime_from_dict(r.to_dict()) for r in client.list(TrainingRuntime, namespace=namespace)
    ]
    shared = [runtime_from_dict(r.to_dict()) for r in client.list(ClusterTrainingRuntime)]
    return sorted(local, key=lambda r: r.name) + sorted(shared, key=lambda r: r.name)


def get_runtime(
    client: Client,
    name: str,
    *,
    namespace: str | None = None,
    kind: RuntimeKind | None = None,
) -> Runtime:
    """The runtime `name`: of `kind` if given, else the ClusterTrainingRuntime, else the
    namespace's TrainingRuntime. A missing one is a `LookupError` listing those that exist."""
    from flarekit.client._errors import NotFound
    from flarekit_models.trainer.v1alpha1 import ClusterTrainingRuntime, TrainingRuntime

    kinds: tuple[RuntimeKind, ...] = (
        (kind,) if kind else ("ClusterTrainingRuntime", "TrainingRuntime")
    )
    for each in kinds:
        try:
            if each == "ClusterTrainingRuntime":
                return runtime_from_dict(client.get(ClusterTrainingRuntime, name).to_dict())
            found = client.get(TrainingRuntime, name, namespace=namespace)
            return runtime_from_dict(found.to_dict())
        except NotFound:
            continue
    known = ", ".join(f"{r.name} ({r.kind})" for r in list_runtimes(client, namespace)) or "none"
    raise RuntimeNotFound(name, kinds, known)


class RuntimeNotFound(LookupError):
    """No runtime of that name; the message lists the runtimes that exist."""

    def __init__(self, name: str, kinds: tuple[str, ...], known: str) -> None:
        super().__init__(
            f"runtime={name!r}: no {' or '.join(kinds)} of that name; available runtimes: {known}"
        )
        self.name = name
