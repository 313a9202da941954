"""Which CRD copies of a Kubernetes type share its class, and what that class checks.

CRDs embed copies of Kubernetes types (a pod template in a RayCluster, a condition in a
Workload status), and each copy carries its CRD's own validation: required fields,
enums, patterns, lengths, bounds, formats, defaults, list types. Sharing one class per
Kubernetes type must not lose any of that. So copies are compared by what they check:

* the copies that agree with the most common one (same required fields, and the same
  constraints on every property both have) share the Kubernetes type's class, which
  then carries exactly those constraints;
* a copy that checks something else (``TrainJob.spec.runtimeRef``, whose ``name`` must
  not be empty, against the plain ``TypedLocalObjectReference``) is no longer taken for
  the Kubernetes type: it becomes a class of its own family, with its own constraints,
  and so does every copy above it that held it.

Comparing is repeated until nothing changes, since un-sharing a copy changes its parents.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flarekit_generator.ir import VALUE_CHECKS, Node
from flarekit_generator.k8s_types import KubernetesDefinitions

__all__ = ["CoreShapes", "reconcile"]

#: The keywords of a property that change what a model accepts.
_CHECKS = ("shape", *VALUE_CHECKS)


@dataclass
class CoreShapes:
    """What the shared class of each Kubernetes type is built from."""

    #: definition -> property -> the node of a sharing copy (its constraints and types).
    properties: dict[str, dict[str, Node]]
    #: definition -> the required properties of the sharing copies.
    required: dict[str, tuple[str, ...]]
    #: how many copies became classes of their own family, per definition.
    unshared: dict[str, int]

    def node_for(self, defs: KubernetesDefinitions, name: str) -> Node:
        """The class node of ``name``: the definition's properties and documentation, with
        each property as the sharing copies declare it (if any copy has it)."""
        node = defs.node_for(name)
        definition = defs.definitions[name]
        for prop, copy in self.properties.get(name, {}).items():
            if prop not in definition.properties and copy.shape == "object" and not copy.core_type:
                copy = Node(shape="free", description=copy.description)
            doc = definition.descriptions.get(prop, copy.description)
            node.properties[prop] = dataclasses.replace(copy, description=doc)
        node.properties = dict(sorted(node.properties.items()))
        if name in self.required:
            node.required = self.required[name]
        return node


def reconcile(copies: dict[str, list[Node]], roots: Iterable[Node]) -> CoreShapes:
    """Un-share the copies that disagree with their type's common copy; see the module doc."""
    roots = list(roots)
    unshared: Counter[str] = Counter()
    while True:
        changed = False
        for name in sorted(copies):
            sharing = [n for n in copies[name] if n.core_type == name and n.shape == "object"]
            if len(sharing) < 2:
                continue
            signatures = [_signature(n) for n in sharing]
            common = _most_common(signatures)
            for node, signature in zip(sharing, signatures, strict=True):
                if not _agrees(signature, common):
                    node.core_type, node.copy_of = None, name
                    unshared[name] += 1
                    changed = True
        if not changed:
            break
        for root in roots:
            root.invalidate()
    properties: dict[str, dict[str, Node]] = {}
    required: dict[str, tuple[str, ...]] = {}
    for name in sorted(copies):
        sharing = [n for n in copies[name] if n.core_type == name and n.shape == "object"]
        if not sharing:
            continue
        required[name] = sharing[0].required
        merged: dict[str, Node] = {}
        for node in sharing:
            for prop, child in node.properties.items():
                merged.setdefault(prop, child)
        properties[name] = merged
    return CoreShapes(properties, required, dict(sorted(unshared.items())))


def _signature(node: Node) -> dict[str, Any]:
    """What a copy checks: its required set, object-level limits and each property's checks."""
    return {
        "required": sorted(node.required),
        "own": _checks(node, object_level=True),
        "properties": {prop: _property(child) for prop, child in node.properties.items()},
    }


def _checks(node: Node, object_level: bool = False) -> dict[str, Any]:
    names = ("min_properties", "max_properties") if object_level else _CHECKS
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(node, name)
        if value not in (None, False, ()):
            out[name] = list(value) if isinstance(value, tuple) else value
    if not object_level:
        if node.has_default:
            out["default"] = node.default
        if node.list_type in ("set", "map"):
            out["list"] = [node.list_type, *node.list_map_keys]
    return out


def _property(node: Node) -> Any:
    if node.core_type is not None:
        return ["core", node.core_type, _checks(node)]
    if node.shape == "object":
        return ["family", node.digest()]
    out = _checks(node)
    if node.items is not None:
        out["items"] = _property(node.items)
    if node.values is not None:
        out["values"] = _property(node.values)
    return out


def _key(signature: dict[str, Any]) -> str:
    return json.dumps(signature, sort_keys=True, default=str)


def _most_common(signatures: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(_key(s) for s in signatures)
    best = max(counts.items(), key=lambda item: (item[1], item[0]))[0]
    return next(s for s in signatures if _key(s) == best)


def _agrees(signature: dict[str, Any], common: dict[str, Any]) -> bool:
    """The same checks wherever both declare a property (a copy may lack newer fields)."""
    if signature["required"] != common["required"] or signature["own"] != common["own"]:
        return False
    theirs = common["properties"]
    return all(
        _key(value) == _key(theirs[prop])
        for prop, value in signature["properties"].items()
        if prop in theirs
    )
