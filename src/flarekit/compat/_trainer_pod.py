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
from typing import Any, Literal

from flarekit._validation import ConfigError, Problem
from flarekit.compat._fields import server_has
from flarekit.compat._releases import FamilyRelease
from flarekit.compat._torch_runtime import PATCH_MANAGER

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


@dataclass
class _Group:
    """Pod settings for some replicated jobs: the neutral form all three fields share."""

    jobs: list[str]
    pod: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str = ""


def _refuse(path: str, value: Any, why: str, expected: str) -> ConfigError:
    return ConfigError([Problem(path, value, why, expected)], "TrainJob pod customisation")


def _from_runtime_patches(entries: list[Any]) -> list[_Group]:
    out = []
    for i, entry in enumerate(entries):
        base = f"spec.runtimePatches[{i}]"
        extra = set(entry) - {"manager", "time", "trainingRuntimeSpec"}
        spec = entry.get("trainingRuntimeSpec") or {}
        template = spec.get("template") or {}
        extra |= {f"trainingRuntimeSpec.{k}" for k in set(spec) - {"template"}}
        extra |= {f"trainingRuntimeSpec.template.{k}" for k in set(template) - {"spec"}}
        jobset = template.get("spec") or {}
        extra |= {
            f"trainingRuntimeSpec.template.spec.{k}" for k in set(jobset) - {"replicatedJobs"}
        }
        if extra:
            first = sorted(extra)[0]
            raise _refuse(
                f"{base}.{first}",
                "(set)",
                "only pod settings per replicated job can move to another pod field",
                "trainingRuntimeSpec.template.spec.replicatedJobs[].template.spec.template",
            )
        for j, job in enumerate(jobset.get("replicatedJobs") or []):
            where = f"{base}.trainingRuntimeSpec.template.spec.replicatedJobs[{j}]"
            outer = job.get("template") or {}
            inner = (outer.get("spec") or {}).get("template") or {}
            odd = (set(job) - {"name", "template"}) | {
                f"template.{k}" for k in set(outer) - {"spec"}
            }
            odd |= {f"template.spec.{k}" for k in set(outer.get("spec") or {}) - {"template"}}
            if odd:
                raise _refuse(
                    f"{where}.{sorted(odd)[0]}",
                    "(set)",
                    "a Job-level setting, which podSpecOverrides and podTemplateOverrides lack",
                    "pod settings only (template.spec.template)",
                )
            out.append(
                _Group(
                    [str(job.get("name"))],
                    dict(inner.get("spec") or {}),
                    dict(inner.get("metadata") or {}),
                    where,
                )
            )
    return out


def _targets(entry: Mapping[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in entry.get("targetJobs") or [] if isinstance(t, Mapping)]


def _groups(spec: Mapping[str, Any], source: PodField) -> list[_Group]:
    entries = list(spec.get(source) or [])
    if source == "runtimePatches":
        return _from_runtime_patches(entries)
    out = []
    for i, entry in enumerate(entries):
        where = f"spec.{source}[{i}]"
        if source == "podTemplateOverrides":
            out.append(
                _Group(
                    _targets(entry),
                    dict(entry.get("spec") or {}),
                    dict(entry.get("metadata") or {}),
                    where,
                )
            )
        else:
            pod = {k: v for k, v in entry.items() if k != "targetJobs"}
            out.append(_Group(_targets(entry), pod, {}, where))
    return out


def _render(groups: list[_Group], target: PodField) -> list[dict[str, Any]]:
    if target == "runtimePatches":
        jobs = []
        for group in groups:
            template: dict[str, Any] = {"spec": group.pod}
            if group.metadata:
                template["metadata"] = group.metadata
            for name in group.jobs:
                jobs.append({"name": name, "template": {"spec": {"template": template}}})
        patch = {"template": {"spec": {"replicatedJobs": jobs}}}
        return [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": patch}]
    out = []
    for group in groups:
        entry: dict[str, Any] = {"targetJobs": [{"name": n} for n in group.jobs]}
        if target == "podTemplateOverrides":
            if group.metadata:
                entry["metadata"] = group.metadata
            entry["spec"] = group.pod
        else:
            if group.metadata:
                raise _refuse(
                    f"{group.source} metadata",
                    group.metadata,
                    "pod labels or annotations, which podSpecOverrides (Trainer v2.0) lacks",
                    "no pod metadata, or Trainer v2.1 or later on the cluster",
                )
            entry.update(group.pod)
        out.append(entry)
    return out


def move_pod_field(obj: Mapping[str, Any], target: PodField) -> dict[str, Any]:
    """`obj` (TrainJob JSON) with its pod customisation in `target` (a deep copy).

    Raises `ConfigError` naming the path for settings `target` cannot hold, and when the
    object sets more than one of the fields.
    """
    data = copy.deepcopy(dict(obj))
    spec = data.get("spec") or {}
    used = [f for f in POD_FIELDS if spec.get(f)]
    if not used or used == [target]:
        return data
    if len(used) > 1:
        raise _refuse(
            f"spec.{used[1]}",
            "(set)",
            f"pod customisation is set in both spec.{used[0]} and spec.{used[1]}",
            f"one of them (this cluster's Trainer has spec.{target})",
        )
    source = used[0]
    spec[target] = _render(_groups(spec, source), target)
    del spec[source]
    return data
