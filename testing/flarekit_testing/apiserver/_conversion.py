"""Conversion between served versions of a custom resource, where the versions differ.

A CRD whose versions have the same fields is converted by rewriting `apiVersion` (the
apiserver's `None` strategy). Kueue's v1beta1 and v1beta2 differ: Kueue's conversion webhook
renames fields between them (ClusterQueue `spec.cohort` / `cohortName`, LocalQueue
`status.flavorUsage` / `flavorsUsage`, Workload `priorityClassName` + `priorityClassSource` /
`priorityClassRef` and the misspelt `accumulatedPastExexcutionTimeSeconds`). FakeCluster does
what that webhook does, so an object written in one version reads right in the other.
Objects are stored in the storage version (v1beta2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from flarekit_testing.apiserver._resources import ResourceType
from flarekit_testing.apiserver._strategy import Strategy

JSON = dict[str, Any]

KUEUE = "kueue.x-k8s.io"
OLD, NEW = "v1beta1", "v1beta2"
WORKLOAD_PRIORITY = ("kueue.x-k8s.io/workloadpriorityclass", KUEUE, "WorkloadPriorityClass")
POD_PRIORITY = ("scheduling.k8s.io/priorityclass", "scheduling.k8s.io", "PriorityClass")


def _rename(obj: JSON, part: str, old: str, new: str) -> None:
    section = obj.get(part)
    if isinstance(section, dict) and old in section:
        section = dict(section)
        section[new] = section.pop(old)
        obj[part] = section


def _priority_to_new(obj: JSON) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict) or "priorityClassSource" not in spec:
        return
    spec = dict(spec)
    source, name = spec.pop("priorityClassSource"), spec.pop("priorityClassName", None)
    for old_source, group, kind in (WORKLOAD_PRIORITY, POD_PRIORITY):
        if source == old_source and name:
            spec["priorityClassRef"] = {"group": group, "kind": kind, "name": name}
    obj["spec"] = spec


def _priority_to_old(obj: JSON) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("priorityClassRef"), dict):
        return
    spec = dict(spec)
    ref = spec.pop("priorityClassRef")
    for source, group, kind in (WORKLOAD_PRIORITY, POD_PRIORITY):
        if ref.get("group") == group and ref.get("kind") == kind:
            spec["priorityClassSource"], spec["priorityClassName"] = source, ref.get("name")
    obj["spec"] = spec


def _workload_up(obj: JSON) -> None:
    _rename(
        obj, "status", "accumulatedPastExexcutionTimeSeconds", "accumulatedPastExecutionTimeSeconds"
    )
    _priority_to_new(obj)


def _workload_down(obj: JSON) -> None:
    _rename(
        obj, "status", "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds"
    )
    _priority_to_old(obj)


Convert = Callable[[JSON], None]
#: kind -> (v1beta1 -> v1beta2, v1beta2 -> v1beta1)
KUEUE_RULES: dict[str, tuple[Convert, Convert]] = {
    "ClusterQueue": (
        lambda o: _rename(o, "spec", "cohort", "cohortName"),
        lambda o: _rename(o, "spec", "cohortName", "cohort"),
    ),
    "LocalQueue": (
        lambda o: _rename(o, "status", "flavorUsage", "flavorsUsage"),
        lambda o: _rename(o, "status", "flavorsUsage", "flavorUsage"),
    ),
    "Workload": (_workload_up, _workload_down),
}


class KueueConversion(Strategy):
    """Custom resource behaviour, with Kueue's v1beta1 <-> v1beta2 field renames."""

    def __init__(self, kind: str) -> None:
        self.up, self.down = KUEUE_RULES[kind]

    def to_stored(self, obj: JSON) -> JSON:
        out = dict(obj)
        if str(out.get("apiVersion", "")).endswith(f"/{OLD}"):
            self.up(out)
        return out

    def from_stored(self, obj: JSON, api_version: str) -> JSON:
        out = dict(obj)
        out["apiVersion"] = api_version
        if api_version.endswith(f"/{OLD}"):
            self.down(out)
        return out


def with_conversion(rt: ResourceType) -> ResourceType:
    """`rt` with the conversion its versions need (unchanged when they need none)."""
    served = {v.name for v in rt.served_versions}
    kueue = rt.group == KUEUE and rt.kind in KUEUE_RULES
    if kueue and {OLD, NEW} <= served and rt.storage_version == NEW:
        return replace(rt, strategy=KueueConversion(rt.kind))
    return rt
