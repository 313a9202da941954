"""Kubeflow Trainer runtimes: what a TrainJob can be started from, summarised for people.

A TrainJob names a runtime (`runtimeRef`): a cluster-wide ``ClusterTrainingRuntime`` or a
namespaced ``TrainingRuntime`` that holds the JobSet template and the ML policy (torch, MPI, ...).
Users pick one by name; what they need to know is its framework, how many nodes and processes
it starts by default, the trainer image and which replicated job runs the trainer. `Runtime`
is that summary, read from the typed object; what only older Trainer releases have (2.0
wrote ``numProcPerNode`` under ``torch``, 2.3 under the TrainJob) is read from the fields
the model keeps unknown, so runtimes of every release read alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import flarekit.client
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit.client import Client
    from flarekit_models import KubeModel
    from flarekit_models.core.v1 import Container
    from flarekit_models.trainer.v1alpha1 import (
        ClusterTrainingRuntime,
        MlPolicy,
        ReplicatedJob,
    )

__all__ = [
    "ANCESTOR_LABEL",
    "FRAMEWORK_LABEL",
    "Runtime",
    "RuntimeKind",
    "get_runtime",
    "list_runtimes",
    "runtime_of",
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
    details: Mapping[str, JsonValue] = field(default_factory=dict)

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


def _older_field(model: KubeModel | None, key: str) -> JsonValue:
    """A field an older Trainer release has and this release's model does not declare (kept
    as an unknown field under its JSON name), such as 2.0's ``torch.numProcPerNode``."""
    extra = model.model_extra if model is not None else None
    return extra.get(key) if extra else None


def _containers(job: ReplicatedJob) -> list[Container]:
    spec = job.template.spec
    pod = spec.template.spec if spec is not None else None
    return list(pod.containers) if pod is not None else []


def _ancestor(job: ReplicatedJob) -> str | None:
    meta = job.template.metadata
    return (meta.labels or {}).get(ANCESTOR_LABEL) if meta is not None else None


def _trainer(jobs: Sequence[ReplicatedJob]) -> tuple[str, str, str | None]:
    """(job, container, image) of the trainer: the job labelled as the trainer's ancestor
    (else one named ``node``), its container named ``node`` (else its first)."""
    chosen = next(
        (j for j in jobs if _ancestor(j) == "trainer"),
        next((j for j in jobs if j.name == _TRAINER_JOB), None),
    )
    if chosen is None:
        return _TRAINER_JOB, _TRAINER_JOB, None
    containers = _containers(chosen)
    container = next(
        (c for c in containers if c.name == _TRAINER_JOB), containers[0] if containers else None
    )
    return (
        chosen.name or _TRAINER_JOB,
        (container.name if container is not None else None) or _TRAINER_JOB,
        container.image if container is not None else None,
    )


def _policy(ml: MlPolicy | None) -> str:
    if ml is None:
        return "plain"
    return next((p for p in _POLICIES if getattr(ml, p) is not None), "plain")


def _per_node(ml: MlPolicy | None, policy: str) -> int | str | None:
    """The runtime's processes per node (``"auto"`` and the like as given)."""
    if ml is None:
        return None
    if policy == "torch":
        value = _older_field(ml.torch, "numProcPerNode")
        return value if isinstance(value, int | str) and not isinstance(value, bool) else None
    if policy == "mpi" and ml.mpi is not None:
        return ml.mpi.num_proc_per_node
    if policy == "flux" and ml.flux is not None:
        return ml.flux.num_proc_per_node
    return None


def _details(ml: MlPolicy | None) -> dict[str, JsonValue]:
    details: dict[str, JsonValue] = {}
    if ml is not None and ml.mpi is not None and _policy(ml) == "mpi":
        mpi = ml.mpi.to_dict()
        for key in ("mpiImplementation", "sshAuthMountPath", "runLauncherAsNode"):
            if mpi.get(key) is not None:
                details[key] = mpi[key]
    elastic = _older_field(ml.torch if ml is not None else None, "elasticPolicy")
    if isinstance(elastic, Mapping):
        details["elasticPolicy"] = dict(elastic)
    return details


def runtime_of(obj: ClusterTrainingRuntime | trainer_v1alpha1.TrainingRuntime) -> Runtime:
    """The `Runtime` summary of a ClusterTrainingRuntime or TrainingRuntime."""
    meta, spec = obj.metadata, obj.spec
    ml = spec.ml_policy if spec is not None else None
    policy = _policy(ml)
    template = spec.template.spec if spec is not None and spec.template is not None else None
    jobs = list(template.replicated_jobs or ()) if template is not None else []
    job, container, image = _trainer(jobs)
    groups = spec.pod_group_policy if spec is not None else None
    gang = next(
        (k for k in ("coscheduling", "volcano") if getattr(groups, k, None) is not None), None
    )
    kind: RuntimeKind = (
        "TrainingRuntime"
        if isinstance(obj, trainer_v1alpha1.TrainingRuntime)
        else "ClusterTrainingRuntime"
    )
    return Runtime(
        name=(meta.name if meta is not None else None) or "",
        kind=kind,
        namespace=meta.namespace if meta is not None and kind == "TrainingRuntime" else None,
        framework=(meta.labels or {}).get(FRAMEWORK_LABEL) if meta is not None else None,
        policy=policy,
        num_nodes=ml.num_nodes if ml is not None else None,
        num_proc_per_node=_per_node(ml, policy),
        image=image,
        trainer_job=job,
        trainer_container=container,
        replicated_jobs=tuple(j.name for j in jobs),
        containers={j.name: tuple(c.name for c in _containers(j)) for j in jobs},
        gang=gang,
        details=_details(ml),
    )


def list_runtimes(client: Client, namespace: str | None = None) -> list[Runtime]:
    """The TrainingRuntimes of `namespace` (the client's by default), then every
    ClusterTrainingRuntime, each sorted by name."""
    local = [
        runtime_of(r) for r in client.list(trainer_v1alpha1.TrainingRuntime, namespace=namespace)
    ]
    shared = [runtime_of(r) for r in client.list(trainer_v1alpha1.ClusterTrainingRuntime)]
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
    kinds: tuple[RuntimeKind, ...] = (
        (kind,) if kind else ("ClusterTrainingRuntime", "TrainingRuntime")
    )
    for each in kinds:
        try:
            if each == "ClusterTrainingRuntime":
                return runtime_of(client.get(trainer_v1alpha1.ClusterTrainingRuntime, name))
            found = client.get(trainer_v1alpha1.TrainingRuntime, name, namespace=namespace)
            return runtime_of(found)
        except flarekit.client.NotFound:
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
