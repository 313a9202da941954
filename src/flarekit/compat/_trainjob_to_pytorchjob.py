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
from typing import Any

from flarekit.compat._engine import Context, build, load
from flarekit.compat._torch_runtime import (
    CONTAINER,
    JOB,
    PATCH_MANAGER,
    PYTORCH,
    PYTORCH_CONTAINER,
    TORCH_DISTRIBUTED,
    TRAINJOB,
    normalized_ref,
)
from flarekit_models._base import KubeModel, KubeResource

__all__ = ["trainjob_to_pytorchjob"]

_RUN_POLICY = ("suspend", "activeDeadlineSeconds", "managedBy")


def trainjob_to_pytorchjob(
    job: KubeModel | Mapping[str, Any],
    *,
    runtime_ref: Mapping[str, str] = TORCH_DISTRIBUTED,
    restart_policy: str | None = None,
    image_pull_policy: str | None = None,
) -> KubeResource:
    """The PyTorchJob running what ``job`` runs on ``runtime_ref``."""
    ctx = Context.of(TRAINJOB, PYTORCH)
    data = load(job, ctx)
    if data.get("status"):
        ctx.refuse("status", "a PyTorchJob's status has another shape; convert without status")
    spec = dict(data.get("spec") or {})
    ref = spec.pop("runtimeRef", {})
    if normalized_ref(ref) != normalized_ref(runtime_ref):
        ctx.refuse(
            "spec.runtimeRef",
            f"{ref!r} is not the runtime this conversion assumes ({dict(runtime_ref)!r})",
        )
    trainer = dict(spec.pop("trainer", None) or {})
    for required in ("image", "numNodes"):
        if required not in trainer:
            ctx.refuse(f"spec.trainer.{required}", "left to the runtime; a PyTorchJob needs it set")
    container: dict[str, Any] = {"name": PYTORCH_CONTAINER}
    for key in ("image", "command", "args", "env"):
        if key in trainer:
            container[key] = trainer.pop(key)
    if "resourcesPerNode" in trainer:
        container["resources"] = trainer.pop("resourcesPerNode")
    if image_pull_policy is not None:
        container["imagePullPolicy"] = image_pull_policy
    nodes = trainer.pop("numNodes")
    out_spec: dict[str, Any] = {}
    if "numProcPerNode" in trainer:
        out_spec["nprocPerNode"] = str(trainer.pop("numProcPerNode"))
    _refuse_left(trainer, "spec.trainer", ctx)
    template = _pod_template(spec.pop("runtimePatches", []), container, ctx)
    run_policy = {k: spec.pop(k) for k in _RUN_POLICY if k in spec}
    if run_policy:
        out_spec["runPolicy"] = run_policy
    for key in list(spec):
        if ctx.source.has(f"spec.{key}"):
            ctx.refuse(f"spec.{key}", f"{ctx.target.name} has no counterpart")
        out_spec[key] = spec.pop(key)
    replicas = {"Master": _replica(1, template, restart_policy)}
    if nodes > 1:
        replicas["Worker"] = _replica(nodes - 1, template, restart_policy)
    out_spec["pytorchReplicaSpecs"] = replicas
    return build({"metadata": data.get("metadata", {}), "spec": out_spec}, ctx)


def _replica(count: int, template: dict[str, Any], restart: str | None) -> dict[str, Any]:
    replica: dict[str, Any] = {"replicas": count}
    if restart is not None:
        replica["restartPolicy"] = restart
    replica["template"] = template
    return replica


def _pod_template(patches: list[Any], container: dict[str, Any], ctx: Context) -> dict[str, Any]:
    pod: dict[str, Any] = {}
    pod_where = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
    if len(patches) > 1:
        ctx.refuse("spec.runtimePatches[1]", "only one runtime patch converts")
    for patch in patches:
        where = "spec.runtimePatches[0]"
        patch = dict(patch)
        if patch.pop("manager", None) != PATCH_MANAGER:
            ctx.refuse(f"{where}.manager", f"only a patch by {PATCH_MANAGER!r} converts")
        runtime = dict(patch.pop("trainingRuntimeSpec", {}) or {})
        _refuse_left(patch, where, ctx)
        where += ".trainingRuntimeSpec"
        template = dict(runtime.pop("template", {}) or {})
        _refuse_left(runtime, where, ctx)
        where += ".template"
        jobs = dict(template.pop("spec", {}) or {}).get("replicatedJobs", [])
        _refuse_left(template, where, ctx)
        for index, job in enumerate(jobs):
            jwhere = f"{where}.spec.replicatedJobs[{index}]"
            if job.get("name") != JOB or len(jobs) != 1:
                ctx.refuse(f"{jwhere}.name", f"only the {JOB!r} job converts")
            job_template = dict(job.get("template") or {})
            pod = dict(dict(job_template.pop("spec", {}) or {}).get("template") or {})
            _refuse_left(job_template, f"{jwhere}.template", ctx)
    pod_spec = dict(pod.get("spec") or {})
    patched = pod_spec.pop("containers", [])
    for index, item in enumerate(patched):
        if item.get("name") != CONTAINER:
            where = f"{pod_where}.template.spec.template.spec.containers[{index}].name"
            ctx.refuse(where, f"only the {CONTAINER!r} container converts")
        container.update({k: v for k, v in item.items() if k != "name"})
    template_out: dict[str, Any] = {}
    if pod.get("metadata"):
        template_out["metadata"] = pod["metadata"]
    template_out["spec"] = {"containers": [container], **pod_spec}
    return template_out


def _refuse_left(left: Mapping[str, Any], where: str, ctx: Context) -> None:
    for key in left:
        ctx.refuse(f"{where}.{key}", f"{ctx.target.name} has no place for it")
