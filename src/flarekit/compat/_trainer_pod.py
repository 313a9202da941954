"""Trainer's pod-customisation field, which each recent release renamed, in the one it has.

A TrainJob customises the runtime's pods in ``spec.podSpecOverrides`` (Trainer v2.0: a
subset of the pod spec per list of target jobs), ``spec.podTemplateOverrides`` (v2.1: a pod
template per list of target jobs) or ``spec.runtimePatches`` (v2.2 on: a patch of the
runtime's JobSet, owned by a named manager). A server without the field prunes it without a
word. `pod_field_of` says which one a cluster's release has (from its CRD, or the field
table of the release negotiation found), and `move_pod_field` rewrites an object's pod
customisation from whichever field it was written in to that one, refusing (by path) what
the target cannot express rather than dropping it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from flarekit._json import JsonValue
from flarekit._validation import ConfigError, Problem
from flarekit.compat._engine import carry
from flarekit.compat._fields import server_has
from flarekit.compat._json_field import JsonField, JsonFields
from flarekit.compat._releases import FamilyRelease
from flarekit.compat._torch_runtime import PATCH_MANAGER
from flarekit_models import KubeModel

__all__ = ["POD_FIELDS", "PodField", "move_pod_field", "pod_field_of"]

PodField = Literal["runtimePatches", "podTemplateOverrides", "podSpecOverrides"]
#: Newest first.
POD_FIELDS: tuple[PodField, ...] = ("runtimePatches", "podTemplateOverrides", "podSpecOverrides")
TRAINJOB_API = "trainer.kubeflow.org/v1alpha1"


def pod_field_of(release: FamilyRelease) -> PodField | None:
    """The pod-customisation field the cluster's Trainer has, or None when that is not known
    for certain (Trainer not installed, or candidate releases that differ)."""
    if not release.installed:
        return None
    has = server_has(release, TRAINJOB_API, "TrainJob")
    if has is None:
        return None
    present = [f for f in POD_FIELDS if has(f"spec.{f}")]
    return present[0] if len(present) == 1 else None


# -- the three shapes, as read and written --------------------------------------------------
# Only the newest shape (runtimePatches) has a generated model, and it declares fields (time,
# Job settings) that have no place in the older ones; these models declare what moves between
# the three. Anything else set in them is an unknown field, refused by path.


class _PodTemplate(KubeModel):
    metadata: JsonFields | None = None
    spec: JsonFields | None = None


class _JobSpec(KubeModel):
    template: _PodTemplate | None = None


class _JobTemplate(KubeModel):
    spec: _JobSpec | None = None


class _ReplicatedJob(KubeModel):
    name: str | None = None
    template: _JobTemplate | None = None


class _JobSetSpec(KubeModel):
    replicated_jobs: list[_ReplicatedJob] | None = Field(None, alias="replicatedJobs")


class _JobSetTemplate(KubeModel):
    spec: _JobSetSpec | None = None


class _RuntimeSpec(KubeModel):
    template: _JobSetTemplate | None = None


class _RuntimePatch(KubeModel):
    """An entry of ``spec.runtimePatches`` (Trainer v2.2 on)."""

    manager: str | None = None
    time: JsonField = None
    training_runtime_spec: _RuntimeSpec | None = Field(None, alias="trainingRuntimeSpec")


class _TargetJob(KubeModel):
    name: str | None = None


class _PodTemplateOverride(KubeModel):
    """An entry of ``spec.podTemplateOverrides`` (Trainer v2.1)."""

    target_jobs: list[_TargetJob] = Field(default_factory=list, alias="targetJobs")
    metadata: JsonFields | None = None
    spec: JsonFields | None = None


class _PodSpecOverride(KubeModel):
    """An entry of ``spec.podSpecOverrides`` (Trainer v2.0): pod spec fields beside
    ``targetJobs`` (kept as the model's unknown fields)."""

    target_jobs: list[_TargetJob] = Field(default_factory=list, alias="targetJobs")


class _TrainJob(KubeModel):
    """A TrainJob of any Trainer release: its spec is read as JSON, since which of the three
    pod fields it holds depends on the release that wrote it."""

    spec: JsonFields | None = None


@dataclass
class _Group:
    """Pod settings for some replicated jobs: the neutral form all three fields share."""

    jobs: list[str]
    pod: dict[str, JsonValue]
    metadata: dict[str, JsonValue] = field(default_factory=dict)
    source: str = ""


def _refuse(path: str, value: JsonValue, why: str, expected: str) -> ConfigError:
    return ConfigError([Problem(path, value, why, expected)], "TrainJob pod customisation")


def _unknown(model: KubeModel, prefix: str = "") -> set[str]:
    return {f"{prefix}{key}" for key in model.model_extra or ()}


def _from_runtime_patches(entries: list[JsonValue]) -> list[_Group]:
    out = []
    for i, raw in enumerate(entries):
        base = f"spec.runtimePatches[{i}]"
        entry = _RuntimePatch.model_validate(raw)
        spec = entry.training_runtime_spec or _RuntimeSpec()
        template = spec.template or _JobSetTemplate()
        jobset = template.spec or _JobSetSpec()
        extra = _unknown(entry) | _unknown(spec, "trainingRuntimeSpec.")
        extra |= _unknown(template, "trainingRuntimeSpec.template.")
        extra |= _unknown(jobset, "trainingRuntimeSpec.template.spec.")
        if extra:
            first = sorted(extra)[0]
            raise _refuse(
                f"{base}.{first}",
                "(set)",
                "only pod settings per replicated job can move to another pod field",
                "trainingRuntimeSpec.template.spec.replicatedJobs[].template.spec.template",
            )
        for j, job in enumerate(jobset.replicated_jobs or []):
            where = f"{base}.trainingRuntimeSpec.template.spec.replicatedJobs[{j}]"
            outer = job.template or _JobTemplate()
            inner_spec = outer.spec or _JobSpec()
            odd = _unknown(job) | _unknown(outer, "template.")
            odd |= _unknown(inner_spec, "template.spec.")
            if odd:
                raise _refuse(
                    f"{where}.{sorted(odd)[0]}",
                    "(set)",
                    "a Job-level setting, which podSpecOverrides and podTemplateOverrides lack",
                    "pod settings only (template.spec.template)",
                )
            inner = inner_spec.template or _PodTemplate()
            if inner.model_extra:
                raise _refuse(
                    f"{where}.template.spec.template.{sorted(inner.model_extra)[0]}",
                    "(set)",
                    "only a pod's metadata and spec can move to another pod field",
                    "metadata and spec",
                )
            out.append(
                _Group([str(job.name)], dict(inner.spec or {}), dict(inner.metadata or {}), where)
            )
    return out


def _targets(jobs: list[_TargetJob]) -> list[str]:
    return [str(job.name) for job in jobs]


def _groups(entries: list[JsonValue], source: PodField) -> list[_Group]:
    if source == "runtimePatches":
        return _from_runtime_patches(entries)
    out = []
    for i, raw in enumerate(entries):
        where = f"spec.{source}[{i}]"
        if source == "podTemplateOverrides":
            entry = _PodTemplateOverride.model_validate(raw)
            if entry.model_extra:
                raise _refuse(
                    f"{where}.{sorted(entry.model_extra)[0]}",
                    "(set)",
                    "only target jobs, pod metadata and pod spec can move to another pod field",
                    "targetJobs, metadata and spec",
                )
            pod = dict(entry.spec or {})
            out.append(_Group(_targets(entry.target_jobs), pod, dict(entry.metadata or {}), where))
        else:
            overrides = _PodSpecOverride.model_validate(raw)
            pod = dict(overrides.model_extra or {})
            out.append(_Group(_targets(overrides.target_jobs), pod, {}, where))
    return out


def _pod_template(group: _Group) -> _PodTemplate:
    template = _PodTemplate(spec=group.pod)
    if group.metadata:
        template.metadata = group.metadata
    return template


def _render(groups: list[_Group], target: PodField) -> list[JsonValue]:
    if target == "runtimePatches":
        jobs = [
            _ReplicatedJob(
                name=name,
                template=_JobTemplate(spec=_JobSpec(template=_pod_template(group))),
            )
            for group in groups
            for name in group.jobs
        ]
        runtime = _RuntimeSpec(template=_JobSetTemplate(spec=_JobSetSpec(replicated_jobs=jobs)))
        return [_RuntimePatch(manager=PATCH_MANAGER, training_runtime_spec=runtime).to_dict()]
    out: list[JsonValue] = []
    for group in groups:
        targets = [_TargetJob(name=n) for n in group.jobs]
        if target == "podTemplateOverrides":
            entry = _PodTemplateOverride(target_jobs=targets)
            if group.metadata:
                entry.metadata = group.metadata
            entry.spec = group.pod
            out.append(entry.to_dict())
            continue
        if group.metadata:
            raise _refuse(
                f"{group.source} metadata",
                group.metadata,
                "pod labels or annotations, which podSpecOverrides (Trainer v2.0) lacks",
                "no pod metadata, or Trainer v2.1 or later on the cluster",
            )
        out.append(carry(_PodSpecOverride(target_jobs=targets), group.pod).to_dict())
    return out


def move_pod_field(obj: Mapping[str, JsonValue], target: PodField) -> dict[str, JsonValue]:
    """`obj` (TrainJob JSON) with its pod customisation in `target` (a deep copy).

    Raises `ConfigError` naming the path for settings `target` cannot hold, and when the
    object sets more than one of the fields.
    """
    job = _TrainJob.model_validate(copy.deepcopy(dict(obj)))
    spec = job.spec or {}
    used = [f for f in POD_FIELDS if spec.get(f)]
    if used and used != [target]:
        if len(used) > 1:
            raise _refuse(
                f"spec.{used[1]}",
                "(set)",
                f"pod customisation is set in both spec.{used[0]} and spec.{used[1]}",
                f"one of them (this cluster's Trainer has spec.{target})",
            )
        source = used[0]
        entries = spec.pop(source)
        listed = entries if isinstance(entries, list) else []
        spec[target] = _render(_groups(listed, source), target)
    return job.to_dict()
