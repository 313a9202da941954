"""A training-operator PyTorchJob (kubeflow.org/v1) as a Trainer TrainJob.

The job's nodes are its Master (at most one) plus its Workers, all running one pod template
(Master and Worker templates must be equal); that template becomes ``spec.trainer``
(image, command, args, env, resources per node) and, for pod settings (volumes and mounts,
node selector, tolerations, affinity, service account, ...), one entry of
``spec.runtimePatches`` on the runtime's ``node`` job. ``runPolicy.suspend``,
``activeDeadlineSeconds`` and a MultiKueue ``managedBy`` carry over; ``nprocPerNode`` becomes
``numProcPerNode`` when it is a number.

Everything else is refused by path: elastic policy, other run policy fields, sidecars and
init containers, container fields a TrainJob cannot set (ports, probes, ...), status. Two
settings belong to the runtime in a TrainJob: each replica's ``restartPolicy`` and the
container's ``imagePullPolicy``; they are refused too unless the caller names them in
``defer_to_runtime``, accepting that the runtime decides them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from flarekit._json import JsonValue
from flarekit.compat._engine import Context, carry, load_model, made, unhandled
from flarekit.compat._torch_runtime import (
    CONTAINER,
    JOB,
    PATCH_MANAGER,
    POD_PATCH_FIELDS,
    PYTORCH,
    PYTORCH_CONTAINER,
    TORCH_DISTRIBUTED,
    TRAINJOB,
    copy_pod_settings,
)
from flarekit_models import KubeModel
from flarekit_models.core.v1 import PodSpec, PodTemplateSpec
from flarekit_models.kubeflow.v1 import PyTorchJob, PyTorchJobSpec, RunPolicy
from flarekit_models.meta.v1 import ObjectMeta
from flarekit_models.trainer.v1alpha1 import (
    RuntimePatch,
    RuntimePatchTrainingRuntimeSpec,
    RuntimePatchTrainingRuntimeTemplate,
    RuntimePatchTrainingRuntimeTemplateReplicatedJob,
    RuntimePatchTrainingRuntimeTemplateSpec,
    RuntimeRef,
    Trainer,
    TrainJob,
    TrainJobContainer,
    TrainJobJobSpec,
    TrainJobJobTemplateSpec,
    TrainJobPodSpec,
    TrainJobPodTemplateSpec,
    TrainJobSpec,
)

__all__ = ["pytorchjob_to_trainjob"]

_DEFERRABLE = frozenset({"restartPolicy", "imagePullPolicy"})
_MULTIKUEUE = "kueue.x-k8s.io/multikueue"
#: What each part carries (JSON names); anything else it sets is refused by path.
_REPLICA = {"replicas", "restartPolicy", "template"}
_TEMPLATE = {"metadata", "spec"}
_METADATA = {"labels", "annotations"}
_CONTAINER = {
    "name",
    "image",
    "command",
    "args",
    "env",
    "resources",
    "imagePullPolicy",
    "securityContext",
    "volumeMounts",
}
_POD = POD_PATCH_FIELDS | {"containers"}  # what the conversion copies or refuses


def pytorchjob_to_trainjob(
    job: KubeModel | Mapping[str, JsonValue],
    *,
    runtime_ref: Mapping[str, str] = TORCH_DISTRIBUTED,
    defer_to_runtime: Collection[str] = (),
) -> TrainJob:
    """The TrainJob running ``job`` on ``runtime_ref`` (default: ``torch-distributed``)."""
    unknown = set(defer_to_runtime) - _DEFERRABLE
    if unknown:
        raise ValueError(f"defer_to_runtime takes {sorted(_DEFERRABLE)}; got {sorted(unknown)}")
    ctx = Context.of(PYTORCH, TRAINJOB)
    source = load_model(job, PyTorchJob, ctx)
    if source.status is not None and source.status.to_dict():
        ctx.refuse("status", "a TrainJob's status has another shape; convert without status")
    _refuse_left(unhandled(source, {"apiVersion", "kind", "metadata", "spec", "status"}), "", ctx)
    spec = source.spec
    if spec is None:
        ctx.refuse("spec.pytorchReplicaSpecs", "needs a Master or Worker replica spec")
    trainer, pod = _replicas(spec, ctx, frozenset(defer_to_runtime))
    ref = made(lambda: RuntimeRef.model_validate(dict(runtime_ref)), "spec.runtimeRef", ctx)
    out_spec = TrainJobSpec(runtime_ref=ref, trainer=trainer)
    _run_policy(spec.run_policy, out_spec, ctx)
    if spec.nproc_per_node is not None:
        trainer.num_proc_per_node = _nproc(spec.nproc_per_node, ctx)
    left = unhandled(spec, {"pytorchReplicaSpecs", "runPolicy", "nprocPerNode"})
    for key in left:
        if ctx.source.has(f"spec.{key}"):
            ctx.refuse(f"spec.{key}", f"{ctx.target.name} has no counterpart")
    carry(out_spec, left)  # unknown to both versions: carried in spec
    if pod is not None:
        out_spec.runtime_patches = [_patch(pod)]
    target = TrainJob(spec=out_spec)
    if source.metadata is not None:
        target.metadata = source.metadata
    return target


def _replicas(
    spec: PyTorchJobSpec, ctx: Context, deferred: frozenset[str]
) -> tuple[Trainer, TrainJobPodTemplateSpec | None]:
    specs = spec.pytorch_replica_specs
    if not specs:
        ctx.refuse("spec.pytorchReplicaSpecs", "needs a Master or Worker replica spec")
    for role in specs:
        if role not in ("Master", "Worker"):
            ctx.refuse(
                f"spec.pytorchReplicaSpecs.{role}", "only Master and Worker have a TrainJob form"
            )
    nodes = 0
    template: PodTemplateSpec | None = None
    seen: dict[str, JsonValue] | None = None
    restart: str | None = None
    for role in ("Master", "Worker"):
        replica = specs.get(role)
        if replica is None:
            continue
        where = f"spec.pytorchReplicaSpecs.{role}"
        count = 1 if replica.replicas is None else replica.replicas
        if role == "Master" and count != 1:
            ctx.refuse(f"{where}.replicas", "a PyTorchJob has at most one Master")
        nodes += count
        if replica.restart_policy is not None:
            if "restartPolicy" not in deferred:
                ctx.refuse(f"{where}.restartPolicy", "the TrainJob's runtime sets it")
            if restart is not None and replica.restart_policy != restart:
                ctx.refuse(f"{where}.restartPolicy", "differs from the Master's")
            restart = replica.restart_policy
        _refuse_left(unhandled(replica, _REPLICA), where, ctx)
        this = replica.template.to_dict() if replica.template is not None else {}
        if seen is None:
            seen, template = this, replica.template
        elif this != seen:
            ctx.refuse(
                _first_difference(seen, this, f"{where}.template"),
                "a TrainJob runs one pod template on every node; Master and Worker differ",
            )
    where = "spec.pytorchReplicaSpecs." + ("Master" if "Master" in specs else "Worker")
    trainer, pod = _template(template or PodTemplateSpec(), f"{where}.template", ctx, deferred)
    trainer.num_nodes = nodes
    return trainer, pod


def _template(
    template: PodTemplateSpec, where: str, ctx: Context, deferred: frozenset[str]
) -> tuple[Trainer, TrainJobPodTemplateSpec | None]:
    """The trainer (what every node runs) and the pod settings left for a runtime patch."""
    _refuse_left(unhandled(template, _TEMPLATE), where, ctx)
    metadata = template.metadata or ObjectMeta()
    _refuse_left(unhandled(metadata, _METADATA), f"{where}.metadata", ctx)
    pod_spec = template.spec or PodSpec(containers=[])
    containers = pod_spec.containers
    if len(containers) != 1 or containers[0].name != PYTORCH_CONTAINER:
        ctx.refuse(
            f"{where}.spec.containers",
            f"needs exactly one container, named {PYTORCH_CONTAINER!r} (a TrainJob has no sidecars)",
        )
    container = containers[0]
    cwhere = f"{where}.spec.containers[0]"
    trainer = Trainer()
    if container.image is not None:
        trainer.image = container.image
    if container.command is not None:
        trainer.command = container.command
    if container.args is not None:
        trainer.args = container.args
    if container.env is not None:
        trainer.env = container.env
    if container.resources is not None:
        trainer.resources_per_node = container.resources
    if container.image_pull_policy is not None and "imagePullPolicy" not in deferred:
        ctx.refuse(f"{cwhere}.imagePullPolicy", "the TrainJob's runtime sets it")
    _refuse_left(unhandled(container, _CONTAINER), cwhere, ctx)
    _refuse_left(unhandled(pod_spec, _POD), f"{where}.spec", ctx)
    patch_container = TrainJobContainer(name=CONTAINER)
    if container.security_context is not None:
        patch_container.security_context = container.security_context
    if container.volume_mounts is not None:
        patch_container.volume_mounts = container.volume_mounts
    patch_spec = TrainJobPodSpec()
    if container.security_context is not None or container.volume_mounts is not None:
        patch_spec.containers = [patch_container]
    copy_pod_settings(pod_spec, patch_spec)
    pod = TrainJobPodTemplateSpec()
    if metadata.labels is not None or metadata.annotations is not None:
        pod.metadata = ObjectMeta()
        if metadata.labels is not None:
            pod.metadata.labels = metadata.labels
        if metadata.annotations is not None:
            pod.metadata.annotations = metadata.annotations
    if patch_spec.model_fields_set:
        pod.spec = patch_spec
    return trainer, (pod if pod.model_fields_set else None)


def _run_policy(policy: RunPolicy | None, out_spec: TrainJobSpec, ctx: Context) -> None:
    if policy is None:
        return
    handled = set()
    if policy.suspend is not None:
        out_spec.suspend = policy.suspend
        handled.add("suspend")
    if policy.active_deadline_seconds is not None:
        out_spec.active_deadline_seconds = policy.active_deadline_seconds
        handled.add("activeDeadlineSeconds")
    if policy.managed_by == _MULTIKUEUE:
        out_spec.managed_by = policy.managed_by
        handled.add("managedBy")
    _refuse_left(unhandled(policy, handled), "spec.runPolicy", ctx)


def _nproc(value: str, ctx: Context) -> int:
    if value.isdigit():
        return int(value)
    ctx.refuse("spec.nprocPerNode", f"{value!r}: a TrainJob takes a number of processes only")


def _patch(pod: TrainJobPodTemplateSpec) -> RuntimePatch:
    job = RuntimePatchTrainingRuntimeTemplateReplicatedJob(
        name=JOB, template=TrainJobJobTemplateSpec(spec=TrainJobJobSpec(template=pod))
    )
    jobset = RuntimePatchTrainingRuntimeTemplateSpec(replicated_jobs=[job])
    runtime = RuntimePatchTrainingRuntimeSpec(
        template=RuntimePatchTrainingRuntimeTemplate(spec=jobset)
    )
    return RuntimePatch(manager=PATCH_MANAGER, training_runtime_spec=runtime)


def _refuse_left(left: Mapping[str, JsonValue], where: str, ctx: Context) -> None:
    for key in left:
        path = f"{where}.{key}" if where else key
        ctx.refuse(path, f"{ctx.target.name} has no place for it")


_MAPS = frozenset({"annotations", "labels", "limits", "nodeSelector", "requests"})


def _first_difference(a: JsonValue, b: JsonValue, where: str) -> str:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        is_map = where.rsplit(".", 1)[-1] in _MAPS
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                child = f"{where}[{key}]" if is_map else f"{where}.{key}"
                return _first_difference(a.get(key), b.get(key), child)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{where}[{index}]")
    return where
