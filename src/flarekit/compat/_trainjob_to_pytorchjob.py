"""A Trainer TrainJob as a training-operator PyTorchJob (kubeflow.org/v1).

The reverse of :mod:`flarekit.compat._pytorchjob_to_trainjob`: ``numNodes`` nodes become one
Master and ``numNodes - 1`` Workers sharing one pod template, built from ``spec.trainer`` and
the runtime patch this package writes. Only a TrainJob on the expected runtime converts (a
PyTorchJob cannot refer to a runtime), and it must name its image and node count, which the
runtime would otherwise supply. Refused by path: another runtime, runtime patches from
another manager or beyond the pod template, initializers, the Trainer v2.0/v2.1 pod
customisation fields, status. ``restart_policy`` and ``image_pull_policy`` set what the
runtime decided on the TrainJob side.
"""

from __future__ import annotations

from collections.abc import Mapping

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
    same_runtime,
)
from flarekit_models import KubeModel
from flarekit_models.core.v1 import Container, PodSpec, PodTemplateSpec
from flarekit_models.kubeflow.v1 import PyTorchJob, PyTorchJobSpec, ReplicaSpec, RunPolicy
from flarekit_models.trainer.v1alpha1 import RuntimePatch, RuntimeRef, Trainer, TrainJob

__all__ = ["trainjob_to_pytorchjob"]

#: What each part carries (JSON names); anything else it sets is refused by path.
_TRAINER = {"image", "command", "args", "env", "resourcesPerNode", "numNodes", "numProcPerNode"}
_SPEC = {"runtimeRef", "trainer", "runtimePatches", "suspend", "activeDeadlineSeconds", "managedBy"}
_POD_SPEC = POD_PATCH_FIELDS | {"containers"}  # what the conversion copies or refuses


def trainjob_to_pytorchjob(
    job: KubeModel | Mapping[str, JsonValue],
    *,
    runtime_ref: Mapping[str, str] = TORCH_DISTRIBUTED,
    restart_policy: str | None = None,
    image_pull_policy: str | None = None,
) -> PyTorchJob:
    """The PyTorchJob running what ``job`` runs on ``runtime_ref``."""
    ctx = Context.of(TRAINJOB, PYTORCH)
    source = load_model(job, TrainJob, ctx)
    if source.status is not None and source.status.to_dict():
        ctx.refuse("status", "a PyTorchJob's status has another shape; convert without status")
    expected = made(lambda: RuntimeRef.model_validate(dict(runtime_ref)), "runtime_ref", ctx)
    spec = source.spec
    if spec is None or not same_runtime(spec.runtime_ref, expected):
        ref = spec.runtime_ref.to_dict() if spec is not None else {}
        ctx.refuse(
            "spec.runtimeRef",
            f"{ref!r} is not the runtime this conversion assumes ({dict(runtime_ref)!r})",
        )
    trainer = spec.trainer or Trainer()
    if trainer.image is None:
        ctx.refuse("spec.trainer.image", "left to the runtime; a PyTorchJob needs it set")
    if trainer.num_nodes is None:
        ctx.refuse("spec.trainer.numNodes", "left to the runtime; a PyTorchJob needs it set")
    _refuse_left(unhandled(trainer, _TRAINER), "spec.trainer", ctx)
    container = Container(name=PYTORCH_CONTAINER, image=trainer.image)
    if trainer.command is not None:
        container.command = trainer.command
    if trainer.args is not None:
        container.args = trainer.args
    if trainer.env is not None:
        container.env = trainer.env
    if trainer.resources_per_node is not None:
        container.resources = trainer.resources_per_node
    if image_pull_policy is not None:
        container.image_pull_policy = image_pull_policy
    out_spec = PyTorchJobSpec(pytorch_replica_specs={})
    if trainer.num_proc_per_node is not None:
        out_spec.nproc_per_node = str(trainer.num_proc_per_node)
    template = _pod_template(spec.runtime_patches or [], container, ctx)
    policy = RunPolicy()
    if spec.suspend is not None:
        policy.suspend = spec.suspend
    if spec.active_deadline_seconds is not None:
        policy.active_deadline_seconds = spec.active_deadline_seconds
    if spec.managed_by is not None:
        policy.managed_by = spec.managed_by
    if policy.model_fields_set:
        out_spec.run_policy = policy
    left = unhandled(spec, _SPEC)
    for key in left:
        if ctx.source.has(f"spec.{key}"):
            ctx.refuse(f"spec.{key}", f"{ctx.target.name} has no counterpart")
    carry(out_spec, left)  # unknown to both versions: carried in spec
    replicas = {"Master": _replica(1, template, restart_policy)}
    if trainer.num_nodes > 1:
        replicas["Worker"] = _replica(trainer.num_nodes - 1, template, restart_policy)
    out_spec.pytorch_replica_specs = replicas
    target = PyTorchJob(spec=out_spec)
    if source.metadata is not None:
        target.metadata = source.metadata
    return carry(target, unhandled(source, {"apiVersion", "kind", "metadata", "spec", "status"}))


def _replica(count: int, template: PodTemplateSpec, restart: str | None) -> ReplicaSpec:
    replica = ReplicaSpec(replicas=count)
    if restart is not None:
        replica.restart_policy = restart
    replica.template = template.model_copy(deep=True)
    return replica


def _pod_template(
    patches: list[RuntimePatch], container: Container, ctx: Context
) -> PodTemplateSpec:
    """The pod template every replica runs: `container` and the pod settings of the one
    runtime patch this package writes."""
    if len(patches) > 1:
        ctx.refuse("spec.runtimePatches[1]", "only one runtime patch converts")
    pod_out = PodSpec(containers=[container])
    out = PodTemplateSpec(spec=pod_out)
    for patch in patches:
        where = "spec.runtimePatches[0]"
        if patch.manager != PATCH_MANAGER:
            ctx.refuse(f"{where}.manager", f"only a patch by {PATCH_MANAGER!r} converts")
        _refuse_left(unhandled(patch, {"manager", "trainingRuntimeSpec"}), where, ctx)
        runtime = patch.training_runtime_spec
        where += ".trainingRuntimeSpec"
        template = runtime.template if runtime is not None else None
        if runtime is not None:
            _refuse_left(unhandled(runtime, {"template"}), where, ctx)
        where += ".template"
        jobset = template.spec if template is not None else None
        if template is not None:
            _refuse_left(unhandled(template, {"spec"}), where, ctx)
        if jobset is not None:
            _refuse_left(unhandled(jobset, {"replicatedJobs"}), f"{where}.spec", ctx)
        jobs = (jobset.replicated_jobs if jobset is not None else None) or []
        for index, job in enumerate(jobs):
            jwhere = f"{where}.spec.replicatedJobs[{index}]"
            if job.name != JOB or len(jobs) != 1:
                ctx.refuse(f"{jwhere}.name", f"only the {JOB!r} job converts")
            _refuse_left(unhandled(job, {"name", "template"}), jwhere, ctx)
            job_template = job.template
            if job_template is None:
                continue
            _refuse_left(unhandled(job_template, {"spec"}), f"{jwhere}.template", ctx)
            job_spec = job_template.spec
            if job_spec is None:
                continue
            _refuse_left(unhandled(job_spec, {"template"}), f"{jwhere}.template.spec", ctx)
            pod = job_spec.template
            if pod is None:
                continue
            pwhere = f"{jwhere}.template.spec.template"
            if pod.metadata is not None and pod.metadata.to_dict():
                out.metadata = pod.metadata
            pod_spec = pod.spec
            if pod_spec is None:
                continue
            if pod_spec.init_containers:
                ctx.refuse(
                    f"{pwhere}.spec.initContainers",
                    "patches the runtime's init containers, which a PyTorchJob does not have",
                )
            for cindex, item in enumerate(pod_spec.containers or []):
                if item.name != CONTAINER:
                    cwhere = f"{pwhere}.spec.containers[{cindex}].name"
                    ctx.refuse(cwhere, f"only the {CONTAINER!r} container converts")
                if item.env is not None:
                    container.env = item.env
                if item.security_context is not None:
                    container.security_context = item.security_context
                if item.volume_mounts is not None:
                    container.volume_mounts = item.volume_mounts
                carry(
                    container, unhandled(item, {"name", "env", "securityContext", "volumeMounts"})
                )
            copy_pod_settings(pod_spec, pod_out)
            carry(pod_out, unhandled(pod_spec, _POD_SPEC | {"initContainers"}))
    return out


def _refuse_left(left: Mapping[str, JsonValue], where: str, ctx: Context) -> None:
    for key in left:
        ctx.refuse(f"{where}.{key}", f"{ctx.target.name} has no place for it")
