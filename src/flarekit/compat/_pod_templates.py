"""Where the pod templates of a wrapped workload are, and what each pod asks for.

An AppWrapper accounts for its components by pod sets. AppWrapper v1beta2 names each by the
path of a pod template inside the component (``template.spec.template`` for a Job) and reads
the resources from that template; MCAD's v1beta1 lists the resources of each pod set
(``custompodresources``) without saying which template they belong to. Converting between them
needs the templates of the kinds AppWrappers wrap, in the order AppWrapper infers them, and
the per-pod requests and limits of a template.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from flarekit._quantity import QuantityError, format_quantity, parse_quantity

__all__ = ["PodSet", "at_path", "inferred_pod_sets", "pod_resources", "same_quantity"]

PodSet = tuple[str, int]  # path inside the component, replicas

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def at_path(component: Mapping[str, Any], path: str) -> Any:
    """The value at an AppWrapper pod-set path (``template.spec.workerGroupSpecs[0].template``;
    a bare number between dots is an index too), or None."""
    node: Any = component
    for name, index in _STEP.findall(path):
        if index or (name.isdigit() and isinstance(node, list)):
            position = int(index or name)
            node = node[position] if isinstance(node, list) and position < len(node) else None
        elif isinstance(node, Mapping):
            node = node.get(name)
        else:
            return None
    return node


def _count(value: Any, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def inferred_pod_sets(template: Mapping[str, Any]) -> list[PodSet] | None:
    """The pod sets of a wrapped object of a kind AppWrapper knows (their paths in the
    component and pod counts, in AppWrapper's order), or None for other kinds."""
    kind = template.get("kind")
    group = str(template.get("apiVersion", "")).rpartition("/")[0]
    spec = template.get("spec") if isinstance(template.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    if kind == "Pod" and group == "":
        return [("template", 1)]
    if kind == "Job" and group == "batch":
        return [("template.spec.template", _count(spec.get("parallelism")))]
    if kind in ("Deployment", "StatefulSet", "ReplicaSet") and group == "apps":
        return [("template.spec.template", _count(spec.get("replicas")))]
    if kind == "RayCluster" and group == "ray.io":
        return _ray("template.spec", spec)
    if kind == "PyTorchJob" and group == "kubeflow.org":
        replicas = spec.get("pytorchReplicaSpecs") or {}
        return [
            (f"template.spec.pytorchReplicaSpecs.{role}.template", _count(replicas[role].get("replicas")))
            for role in ("Master", "Worker")
            if isinstance(replicas.get(role), Mapping)
        ]  # fmt: skip
    if kind == "LeaderWorkerSet" and group == "leaderworkerset.x-k8s.io":
        lws = spec.get("leaderWorkerTemplate") or {}
        groups, size = _count(spec.get("replicas")), _count(lws.get("size"))
        base = "template.spec.leaderWorkerTemplate"
        if lws.get("leaderTemplate"):
            return [
                (f"{base}.leaderTemplate", groups),
                (f"{base}.workerTemplate", groups * (size - 1)),
            ]
        return [(f"{base}.workerTemplate", groups * size)]
    if kind == "JobSet" and group == "jobset.x-k8s.io":
        out = []
        for i, job in enumerate(spec.get("replicatedJobs") or []):
            job_spec = ((job.get("template") or {}).get("spec")) or {}
            count = _count(job.get("replicas")) * _count(job_spec.get("parallelism"))
            out.append((f"template.spec.replicatedJobs[{i}].template.spec.template", count))
        return out
    return None


def _ray(prefix: str, spec: Mapping[str, Any]) -> list[PodSet]:
    out = [(f"{prefix}.headGroupSpec.template", 1)]
    for i, group in enumerate(spec.get("workerGroupSpecs") or []):
        count = _count(group.get("replicas")) * _count(group.get("numOfHosts"))
        out.append((f"{prefix}.workerGroupSpecs[{i}].template", count))
    return out


def pod_resources(pod_template: Any, which: str) -> dict[str, Any]:
    """The ``requests`` or ``limits`` of one pod of a template: per resource, the value as
    written when one container sets it, else the sum of the containers' values."""
    spec = pod_template.get("spec") if isinstance(pod_template, Mapping) else None
    containers = (spec or {}).get("containers") or [] if isinstance(spec, Mapping) else []
    found: dict[str, list[Any]] = {}
    for container in containers:
        values = ((container or {}).get("resources") or {}).get(which) or {}
        for name, value in values.items():
            found.setdefault(name, []).append(value)
    out: dict[str, Any] = {}
    for name, values in found.items():
        if len(values) == 1:
            out[name] = values[0]
        else:
            try:
                total = sum((parse_quantity(v) for v in values), Decimal(0))
            except QuantityError:
                out[name] = values[0]
                continue
            out[name] = format_quantity(total, binary="memory" in name or "storage" in name)
    return out


def same_quantity(a: Any, b: Any) -> bool:
    """Whether two quantities are equal (an absent value equals zero)."""
    try:
        return parse_quantity(0 if a is None else a) == parse_quantity(0 if b is None else b)
    except QuantityError:
        return bool(a == b)
