"""Workload between Kueue v1beta1 and v1beta2.

* Priority: v1beta1's ``spec.priorityClassSource`` + ``spec.priorityClassName`` are v1beta2's
  ``spec.priorityClassRef`` (group, kind, name). An empty source without a name (the
  server's default) means no class and is dropped; a name without a source is refused.
* ``status.accumulatedPastExexcutionTimeSeconds`` (sic) is
  ``status.accumulatedPastExecutionTimeSeconds`` in v1beta2.
* Topology assignments: domains <-> slices (see :mod:`flarekit.compat._kueue_topology`).
* Refused by name: v1beta2's ``spec.preemptionGates``, ``status.preemptionGates`` and
  ``spec.podSets[].topologyRequest.podsetSliceRequiredTopologyConstraints``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flarekit.compat._engine import Context, get
from flarekit.compat._kueue_topology import domains_to_slices, slices_to_domains
from flarekit.compat._kueue_versions import pair
from flarekit.compat._reshape import Reshape

__all__ = ["workload_v1beta1_to_v1beta2", "workload_v1beta2_to_v1beta1"]

_V1BETA1, _V1BETA2 = pair("Workload")

#: v1beta1 priorityClassSource <-> v1beta2 priorityClassRef (group, kind).
_SOURCES = {
    "kueue.x-k8s.io/workloadpriorityclass": ("kueue.x-k8s.io", "WorkloadPriorityClass"),
    "scheduling.k8s.io/priorityclass": ("scheduling.k8s.io", "PriorityClass"),
}
_REFS = {ref: source for source, ref in _SOURCES.items()}


def _priority_to_ref(data: dict[str, Any], ctx: Context) -> None:
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return
    source = spec.pop("priorityClassSource", "")
    name = spec.pop("priorityClassName", None)
    if name is None and source == "":
        return
    if name is None:
        ctx.refuse("spec.priorityClassSource", "set without spec.priorityClassName")
    if source not in _SOURCES:
        allowed = ", ".join(repr(s) for s in _SOURCES)
        ctx.refuse(
            "spec.priorityClassName" if source == "" else "spec.priorityClassSource",
            f"v1beta2 needs the class's kind: spec.priorityClassSource must be one of {allowed}",
        )
    group, kind = _SOURCES[source]
    spec["priorityClassRef"] = {"group": group, "kind": kind, "name": name}


def _ref_to_priority(data: dict[str, Any], ctx: Context) -> None:
    spec = data.get("spec")
    if not isinstance(spec, dict) or "priorityClassRef" not in spec:
        return
    ref = spec.pop("priorityClassRef")
    extra = set(ref) - {"group", "kind", "name"}
    if extra:
        ctx.refuse(f"spec.priorityClassRef.{sorted(extra)[0]}", "v1beta1 has no such field")
    source = _REFS.get((ref.get("group"), ref.get("kind")))
    if source is None:
        known = ", ".join(f"{group}/{kind}" for group, kind in _REFS)
        ctx.refuse("spec.priorityClassRef", f"v1beta1 can refer only to {known}")
    spec["priorityClassSource"] = source
    spec["priorityClassName"] = ref["name"]


Rewrite = Callable[[dict[str, Any], str, Context], None]


def _topology(rewrite: Rewrite) -> Callable[[dict[str, Any], Context], None]:
    def hook(data: dict[str, Any], ctx: Context) -> None:
        assignments = get(data, "status.admission.podSetAssignments") or []
        for index, assignment in enumerate(assignments):
            topology = (
                assignment.get("topologyAssignment") if isinstance(assignment, dict) else None
            )
            if isinstance(topology, dict):
                path = f"status.admission.podSetAssignments[{index}].topologyAssignment"
                rewrite(topology, path, ctx)

    return hook


workload_v1beta1_to_v1beta2 = Reshape(
    _V1BETA1,
    _V1BETA2,
    moves=(
        (
            "status.accumulatedPastExexcutionTimeSeconds",
            "status.accumulatedPastExecutionTimeSeconds",
        ),
    ),
    hooks=(_priority_to_ref, _topology(domains_to_slices)),
)
workload_v1beta2_to_v1beta1 = Reshape(
    _V1BETA2,
    _V1BETA1,
    moves=(
        (
            "status.accumulatedPastExecutionTimeSeconds",
            "status.accumulatedPastExexcutionTimeSeconds",
        ),
    ),
    hooks=(_ref_to_priority, _topology(slices_to_domains)),
)
