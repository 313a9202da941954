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
from typing import Any

from flarekit.compat._engine import Context, build, load
from flarekit.compat._torch_runtime import (
    CONTAINER,
    CONTAINER_PATCH_FIELDS,
    JOB,
    PATCH_MANAGER,
    POD_PATCH_FIELDS,
    PYTORCH,
    PYTORCH_CONTAINER,
    TORCH_DISTRIBUTED,
    TRAINJOB,
)
from flarekit_models._base import KubeModel, KubeResource

__all__ = ["pytorchjob_to_trainjob"]

_DEFERRABLE = frozenset({"restartPolicy", "imagePullPolicy"})
_TRAINER_FIELDS = {"image": "image", "command": "command", "args": "args", "env": "env"}
_MULTIKUEUE = "kueue.x-k8s.io/multikueue"


def pytorchjob_to_trainjob(
    job: KubeModel | Mapping[str, Any],
    *,
    runtime_ref: Mapping[str, str] = TORCH_DISTRIBUTED,
    defer_to_runtime: Collection[str] = (),
) -> KubeResource:
    """The TrainJob running ``job`` on ``runtime_ref`` (default: ``torch-distributed``)."""
    unknown = set(defer_to_runtime) - _DEFERRABLE
    if unknown:
        raise ValueError(f"defer_to_runtime takes {sorted(_DEFERRABLE)}; got {sorted(unknown)}")
    ctx = Context.of(PYTORCH, TRAINJOB)
    data = load(job, ctx)
    out: dict[str, Any] = {"metadata": data.pop("metadata", {})}
    data.pop("apiVersion", None)
    data.pop("kind", None)
    if data.get("status"):
        ctx.refuse("status", "a TrainJob's status has another shape; convert without status")
    data.pop("status", None)
    spec = data.pop("spec", {})
    _refuse_left(data, "", ctx)
    trainer, patch_pod = _replicas(spec, ctx, frozenset(defer_to_runtime))
    out_spec: dict[str, Any] = {"runtimeRef": dict(runtime_ref), "trainer": trainer}
    _run_policy(spec.pop("runPolicy", None), out_spec, ctx)
    if "nprocPerNode" in spec:
        out_spec["trainer"]["numProcPerNode"] = _nproc(spec.pop("nprocPerNode"), ctx)
    for key in list(spec):
        if ctx.source.has(f"spec.{key}"):
            ctx.refuse(f"spec.{key}", f"{ctx.target.name} has no counterpart")
        out_spec[key] = spec.pop(key)  # unknown to both versions: carried in spec
    if patch_pod:
        out_spec["runtimePatches"] = [_patch(patch_pod)]
    out["spec"] = out_spec
    return build(out, ctx)


def _replicas(
    spec: dict[str, Any], ctx: Context, deferred: frozenset[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    specs = spec.pop("pytorchReplicaSpecs", None) or {}
    if not specs:
        ctx.refuse("spec.pytorchReplicaSpecs", "needs a Master or Worker replica spec")
    for role in specs:
        if role not in ("Master", "Worker"):
            ctx.refuse(
                f"spec.pytorchReplicaSpecs.{role}", "only Master and Worker have a TrainJob form"
            )
    nodes = 0
    template: Any = None
    restart: Any = None
    for role in ("Master", "Worker"):
        if role not in specs:
            continue
        where = f"spec.pytorchReplicaSpecs.{role}"
        replica = dict(specs[role])
        count = replica.pop("replicas", 1)
        if role == "Master" and count != 1:
            ctx.refuse(f"{where}.replicas", "a PyTorchJob has at most one Master")
        nodes += count
        if "restartPolicy" in replica:
            policy = replica.pop("restartPolicy")
            if "restartPolicy" not in deferred:
                ctx.refuse(f"{where}.restartPolicy", "the TrainJob's runtime sets it")
            if restart is not None and policy != restart:
                ctx.refuse(f"{where}.restartPolicy", "differs from the Master's")
            restart = policy
        this = replica.pop("template", {})
        _refuse_left(replica, where, ctx)
        if template is None:
            template = this
        elif this != template:
            ctx.refuse(
                _first_difference(template, this, f"{where}.template"),
                "a TrainJob runs one pod template on every node; Master and Worker differ",
            )
    where = "spec.pytorchReplicaSpecs." + ("Master" if "Master" in specs else "Worker")
    trainer, pod = _template(dict(template), f"{where}.template", ctx, deferred)
    trainer["numNodes"] = nodes
    return trainer, pod


def _template(
    template: dict[str, Any], where: str, ctx: Context, deferred: frozenset[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    metadata = dict(template.pop("metadata", {}) or {})
    pod_spec = dict(template.pop("spec", {}) or {})
    _refuse_left(template, where, ctx)
    patch_meta = {k: metadata.pop(k) for k in ("labels", "annotations") if k in metadata}
    _refuse_left(metadata, f"{where}.metadata", ctx)
    containers = pod_spec.pop("containers", [])
    if len(containers) != 1 or containers[0].get("name") != PYTORCH_CONTAINER:
        ctx.refuse(
            f"{where}.spec.containers",
            f"needs exactly one container, named {PYTORCH_CONTAINER!r} (a TrainJob has no sidecars)",
        )
    container = dict(containers[0])
    container.pop("name")
    cwhere = f"{where}.spec.containers[0]"
    trainer = {k: container.pop(src) for src, k in _TRAINER_FIELDS.items() if src in container}
    if "resources" in container:
        trainer["resourcesPerNode"] = container.pop("resources")
    if "imagePullPolicy" in container:
        if "imagePullPolicy" not in deferred:
            ctx.refuse(f"{cwhere}.imagePullPolicy", "the TrainJob's runtime sets it")
        container.pop("imagePullPolicy")
    patch_container = {k: container.pop(k) for k in CONTAINER_PATCH_FIELDS if k in container}
    _refuse_left(container, cwhere, ctx)
    patch_spec = {k: pod_spec.pop(k) for k in POD_PATCH_FIELDS if k in pod_spec}
    _refuse_left(pod_spec, f"{where}.spec", ctx)
    if patch_container:
        patch_spec["containers"] = [{"name": CONTAINER, **patch_container}]
    pod: dict[str, Any] = {}
    if patch_meta:
        pod["metadata"] = patch_meta
    if patch_spec:
        pod["spec"] = patch_spec
    return trainer, pod


def _run_policy(policy: Any, out_spec: dict[str, Any], ctx: Context) -> None:
    if not policy:
        return
    policy = dict(policy)
    if "suspend" in policy:
        out_spec["suspend"] = policy.pop("suspend")
    if "activeDeadlineSeconds" in policy:
        out_spec["activeDeadlineSeconds"] = policy.pop("activeDeadlineSeconds")
    if policy.get("managedBy") == _MULTIKUEUE:
        out_spec["managedBy"] = policy.pop("managedBy")
    _refuse_left(policy, "spec.runPolicy", ctx)


def _nproc(value: Any, ctx: Context) -> int:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    ctx.refuse("spec.nprocPerNode", f"{value!r}: a TrainJob takes a number of processes only")


def _patch(pod: dict[str, Any]) -> dict[str, Any]:
    job = {"name": JOB, "template": {"spec": {"template": pod}}}
    return {
        "manager": PATCH_MANAGER,
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [job]}}},
    }


def _refuse_left(left: Mapping[str, Any], where: str, ctx: Context) -> None:
    for key in left:
        path = f"{where}.{key}" if where else key
        ctx.refuse(path, f"{ctx.target.name} has no place for it")


_MAPS = frozenset({"annotations", "labels", "limits", "nodeSelector", "requests"})


def _first_difference(a: Any, b: Any, where: str) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
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
