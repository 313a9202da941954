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
from typing import Literal

from pydantic import ConfigDict, Field

from flarekit._json import JsonValue
from flarekit._quantity import QuantityError, format_quantity, parse_quantity
from flarekit.compat._json_field import JsonField
from flarekit_models import KubeModel, Quantity

__all__ = ["PodSet", "Which", "at_path", "inferred_pod_sets", "pod_resources", "same_quantity"]

PodSet = tuple[str, int]  # path inside the component, replicas

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def at_path(component: JsonValue, path: str) -> JsonValue:
    """The value at an AppWrapper pod-set path (``template.spec.workerGroupSpecs[0].template``;
    a bare number between dots is an index too), or None."""
    node = component
    for name, index in _STEP.findall(path):
        if index or (name.isdigit() and isinstance(node, list)):
            position = int(index or name)
            node = node[position] if isinstance(node, list) and position < len(node) else None
        elif isinstance(node, Mapping):
            node = node.get(name)
        else:
            return None
    return node


class _Read(KubeModel):
    """Only what is declared is read; a wrapped object's other fields are not inspected."""

    model_config = ConfigDict(extra="ignore")


def _count(value: JsonValue, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class _Counted(_Read):
    """A part of a wrapped object that scales its pods (counts of any type are read as
    AppWrapper does: a non-integer counts as the default)."""

    replicas: JsonField = None
    parallelism: JsonField = None
    num_of_hosts: JsonField = Field(None, alias="numOfHosts")
    size: JsonField = None


class _JobTemplate(_Read):
    spec: _Counted | None = None


class _ReplicatedJob(_Counted):
    template: _JobTemplate | None = None


class _LeaderWorkerTemplate(_Counted):
    leader_template: JsonField = Field(None, alias="leaderTemplate")


class _WrappedSpec(_Counted):
    worker_group_specs: list[_Counted] = Field(default_factory=list, alias="workerGroupSpecs")
    pytorch_replica_specs: dict[str, _Counted] = Field(
        default_factory=dict, alias="pytorchReplicaSpecs"
    )
    leader_worker_template: _LeaderWorkerTemplate = Field(
        default_factory=_LeaderWorkerTemplate, alias="leaderWorkerTemplate"
    )
    replicated_jobs: list[_ReplicatedJob] = Field(default_factory=list, alias="replicatedJobs")


class _Wrapped(_Read):
    """The parts of a wrapped object that say where its pod templates are."""

    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    spec: _WrappedSpec = Field(default_factory=_WrappedSpec)


def inferred_pod_sets(template: Mapping[str, JsonValue]) -> list[PodSet] | None:
    """The pod sets of a wrapped object of a kind AppWrapper knows (their paths in the
    component and pod counts, in AppWrapper's order), or None for other kinds."""
    wrapped = _Wrapped.model_validate(template)
    kind, spec = wrapped.kind, wrapped.spec
    group = wrapped.api_version.rpartition("/")[0]
    if kind == "Pod" and group == "":
        return [("template", 1)]
    if kind == "Job" and group == "batch":
        return [("template.spec.template", _count(spec.parallelism))]
    if kind in ("Deployment", "StatefulSet", "ReplicaSet") and group == "apps":
        return [("template.spec.template", _count(spec.replicas))]
    if kind == "RayCluster" and group == "ray.io":
        out = [("template.spec.headGroupSpec.template", 1)]
        for i, workers in enumerate(spec.worker_group_specs):
            count = _count(workers.replicas) * _count(workers.num_of_hosts)
            out.append((f"template.spec.workerGroupSpecs[{i}].template", count))
        return out
    if kind == "PyTorchJob" and group == "kubeflow.org":
        replicas = spec.pytorch_replica_specs
        return [
            (f"template.spec.pytorchReplicaSpecs.{role}.template", _count(replicas[role].replicas))
            for role in ("Master", "Worker")
            if role in replicas
        ]
    if kind == "LeaderWorkerSet" and group == "leaderworkerset.x-k8s.io":
        lws = spec.leader_worker_template
        groups, size = _count(spec.replicas), _count(lws.size)
        base = "template.spec.leaderWorkerTemplate"
        if lws.leader_template:
            return [
                (f"{base}.leaderTemplate", groups),
                (f"{base}.workerTemplate", groups * (size - 1)),
            ]
        return [(f"{base}.workerTemplate", groups * size)]
    if kind == "JobSet" and group == "jobset.x-k8s.io":
        out = []
        for i, job in enumerate(spec.replicated_jobs):
            job_spec = job.template.spec if job.template and job.template.spec else _Counted()
            count = _count(job.replicas) * _count(job_spec.parallelism)
            out.append((f"template.spec.replicatedJobs[{i}].template.spec.template", count))
        return out
    return None


class _Resources(_Read):
    requests: dict[str, Quantity] = Field(default_factory=dict)
    limits: dict[str, Quantity] = Field(default_factory=dict)


class _Container(_Read):
    resources: _Resources = Field(default_factory=_Resources)


class _PodSpec(_Read):
    containers: list[_Container] = Field(default_factory=list)


class _PodTemplate(_Read):
    spec: _PodSpec = Field(default_factory=_PodSpec)


Which = Literal["requests", "limits"]


def pod_resources(pod_template: JsonValue, which: Which) -> dict[str, int | str]:
    """The ``requests`` or ``limits`` of one pod of a template: per resource, the value as
    written when one container sets it, else the sum of the containers' values."""
    if not isinstance(pod_template, Mapping):
        return {}
    template = _PodTemplate.model_validate(pod_template)
    found: dict[str, list[int | str]] = {}
    for container in template.spec.containers:
        resources = container.resources
        written = resources.requests if which == "requests" else resources.limits
        for name, value in written.items():
            found.setdefault(name, []).append(value)
    out: dict[str, int | str] = {}
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


def same_quantity(a: JsonValue, b: JsonValue) -> bool:
    """Whether two quantities are equal (an absent value equals zero)."""
    try:
        return parse_quantity(0 if a is None else a) == parse_quantity(0 if b is None else b)
    except QuantityError:
        return bool(a == b)
