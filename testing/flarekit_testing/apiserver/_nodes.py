"""The simulated nodes pods are bound to, and how kube-scheduler matches a pod's node
selector and required node affinity against a node's labels.

Why apart from `pods`: the scheduler and the Kueue flavor assignment both match node labels;
what a node is does not belong to the pod strategy.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["NODES", "node_labels", "node_selector_matches", "unschedulable_message"]


#: The simulated nodes pods are bound to (the names of flarekit's ControlPlane's nodes).
NODES = ("node-0", "node-1")


def node_labels(node: str) -> dict[str, str]:
    """The well-known labels a kubelet sets on its node, for a node on this machine."""
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)
    return {
        "kubernetes.io/hostname": node,
        "kubernetes.io/os": platform.system().lower(),
        "kubernetes.io/arch": arch,
    }


def _requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(requirement.get("key")), str(requirement.get("operator"))
    values = [str(v) for v in requirement.get("values") or []]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and values:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def node_selector_matches(
    pod_spec: Mapping[str, Any], labels: Mapping[str, str], keys: Iterable[str] | None = None
) -> bool:
    """Whether a node with `labels` satisfies a pod's ``nodeSelector`` and required node
    affinity, as kube-scheduler's NodeAffinity filter decides; with `keys`, only the terms on
    those label keys count (how Kueue matches a ResourceFlavor's ``nodeLabels``)."""
    allowed = None if keys is None else set(keys)
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if (allowed is None or key in allowed) and labels.get(key) != value:
            return False
    affinity = (pod_spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    given = required.get("nodeSelectorTerms") or []
    terms = []
    for term in given:
        expressions = [
            e
            for e in term.get("matchExpressions") or []
            if allowed is None or e.get("key") in allowed
        ]
        if not expressions and allowed is not None:
            return True  # a term left empty matches every flavor: the terms are ORed
        if expressions:  # an empty term matches no node
            terms.append(expressions)
    if not given:
        return True
    return any(all(_requirement_matches(e, labels) for e in t) for t in terms)


def unschedulable_message(nodes: int) -> str:
    """kube-scheduler's message when none of `nodes` nodes satisfies a pod's node selector or
    required node affinity."""
    return (
        f"0/{nodes} nodes are available: {nodes} node(s) didn't match Pod's node "
        f"affinity/selector. preemption: 0/{nodes} nodes are available: {nodes} Preemption "
        "is not helpful for scheduling."
    )
