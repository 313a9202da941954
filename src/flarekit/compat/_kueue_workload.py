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

from typing import Literal

from flarekit.compat._engine import Context
from flarekit.compat._kueue_topology import domains_to_slices, slices_to_domains
from flarekit.compat._reshape import Reshape
from flarekit_models.kueue import v1beta1, v1beta2

__all__ = ["workload_v1beta1_to_v1beta2", "workload_v1beta2_to_v1beta1"]

Source = Literal["kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass"]
Group = Literal["kueue.x-k8s.io", "scheduling.k8s.io"]
Kind = Literal["WorkloadPriorityClass", "PriorityClass"]

#: v1beta1 priorityClassSource <-> v1beta2 priorityClassRef (group, kind).
_SOURCES: dict[str, tuple[Group, Kind]] = {
    "kueue.x-k8s.io/workloadpriorityclass": ("kueue.x-k8s.io", "WorkloadPriorityClass"),
    "scheduling.k8s.io/priorityclass": ("scheduling.k8s.io", "PriorityClass"),
}
_REFS: dict[tuple[str, str], Source] = {
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): "kueue.x-k8s.io/workloadpriorityclass",
    ("scheduling.k8s.io", "PriorityClass"): "scheduling.k8s.io/priorityclass",
}


def _source_and_name(source: v1beta1.Workload, ctx: Context) -> None:
    spec = source.spec
    if spec is None:
        return
    kind, name = spec.priority_class_source or "", spec.priority_class_name
    if name is None and kind == "":
        return  # the server's default: no class
    if name is None:
        ctx.refuse("spec.priorityClassSource", "set without spec.priorityClassName")
    if kind not in _SOURCES:
        allowed = ", ".join(repr(s) for s in _SOURCES)
        ctx.refuse(
            "spec.priorityClassName" if kind == "" else "spec.priorityClassSource",
            f"v1beta2 needs the class's kind: spec.priorityClassSource must be one of {allowed}",
        )


def _priority_to_ref(source: v1beta1.Workload, target: v1beta2.Workload, ctx: Context) -> None:
    spec = source.spec
    if spec is None or target.spec is None or spec.priority_class_name is None:
        return
    group, kind = _SOURCES[spec.priority_class_source or ""]
    target.spec.priority_class_ref = v1beta2.PriorityClassRef(
        group=group, kind=kind, name=spec.priority_class_name
    )


def _known_ref(source: v1beta2.Workload, ctx: Context) -> None:
    ref = source.spec.priority_class_ref if source.spec else None
    if ref is None:
        return
    unknown = sorted(set(ref.to_dict()) - {"group", "kind", "name"})
    if unknown:
        ctx.refuse(f"spec.priorityClassRef.{unknown[0]}", "v1beta1 has no such field")
    if (ref.group, ref.kind) not in _REFS:
        known = ", ".join(f"{group}/{kind}" for group, kind in _REFS)
        ctx.refuse("spec.priorityClassRef", f"v1beta1 can refer only to {known}")


def _ref_to_priority(source: v1beta2.Workload, target: v1beta1.Workload, ctx: Context) -> None:
    ref = source.spec.priority_class_ref if source.spec else None
    if ref is None or target.spec is None:
        return
    target.spec.priority_class_source = _REFS[(ref.group, ref.kind)]
    target.spec.priority_class_name = ref.name


def _topology_to_v1beta2(source: v1beta1.Workload, target: v1beta2.Workload, ctx: Context) -> None:
    before = source.status.admission if source.status else None
    after = target.status.admission if target.status else None
    if before is None or after is None:
        return
    pairs = zip(before.pod_set_assignments or [], after.pod_set_assignments or [], strict=True)
    for index, (old, new) in enumerate(pairs):
        if old.topology_assignment is not None:
            path = f"status.admission.podSetAssignments[{index}].topologyAssignment"
            new.topology_assignment = domains_to_slices(old.topology_assignment, path, ctx)


def _topology_to_v1beta1(source: v1beta2.Workload, target: v1beta1.Workload, ctx: Context) -> None:
    before = source.status.admission if source.status else None
    after = target.status.admission if target.status else None
    if before is None or after is None:
        return
    pairs = zip(before.pod_set_assignments or [], after.pod_set_assignments or [], strict=True)
    for index, (old, new) in enumerate(pairs):
        if old.topology_assignment is not None:
            path = f"status.admission.podSetAssignments[{index}].topologyAssignment"
            new.topology_assignment = slices_to_domains(old.topology_assignment, path, ctx)


_TOPOLOGY = "status.admission.podSetAssignments[].topologyAssignment"

workload_v1beta1_to_v1beta2 = Reshape(
    v1beta1.Workload,
    v1beta2.Workload,
    moves=(
        (
            "status.accumulatedPastExexcutionTimeSeconds",
            "status.accumulatedPastExecutionTimeSeconds",
        ),
    ),
    carried=("spec.priorityClassSource", "spec.priorityClassName", _TOPOLOGY),
    checks=(_source_and_name,),
    hooks=(_priority_to_ref, _topology_to_v1beta2),
)
workload_v1beta2_to_v1beta1 = Reshape(
    v1beta2.Workload,
    v1beta1.Workload,
    moves=(
        (
            "status.accumulatedPastExecutionTimeSeconds",
            "status.accumulatedPastExexcutionTimeSeconds",
        ),
    ),
    carried=("spec.priorityClassRef", _TOPOLOGY),
    checks=(_known_ref,),
    hooks=(_ref_to_priority, _topology_to_v1beta1),
)
