"""The Kubernetes API types, read from the OpenAPI definitions that kubernetes-validate ships.

CRDs embed copies of Kubernetes types (a RayCluster carries a whole
PodTemplateSpec). This module loads the upstream definitions once, so that
:mod:`flarekit_generator.recognise` can tell which CRD nodes are such copies
and the emitter can generate each Kubernetes type once, under its own name,
for every CRD to share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from typing import Any

from flarekit_generator.ir import Node

#: The Kubernetes release whose definitions name and shape the shared core types.
#: Pinned (with the kubernetes-validate version in pyproject.toml) so output is reproducible.
KUBERNETES_VERSION = "v1.37.0"

_REF_PREFIX = "#/$defs/"

#: Definitions that become type aliases rather than classes.
SCALAR_ALIASES = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "int-or-string",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int-or-string",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "string",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "string",
}
#: Definitions that hold arbitrary JSON objects.
FREE_FORM = frozenset(
    {
        "io.k8s.apimachinery.pkg.runtime.RawExtension",
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    }
)
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
#: The pattern every CRD generator writes for resource.Quantity.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


@dataclass(frozen=True)
class BuiltInKind:
    """A Kubernetes kind the facade reads directly (not only as a copy inside a CRD)."""

    definition: str
    group: str  # "" for the core group
    version: str
    kind: str
    plural: str
    subresources: tuple[str, ...] = ()
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


#: Built-in kinds generated as top-level resources, so the client addresses them like any
#: other model: the pods (and logs) of jobs, the events about them, and the Ingresses that
#: expose a dashboard. Kinds that CRDs embed (Service, PersistentVolumeClaim) stay parts:
#: making them resources would add apiVersion/kind to every embedded copy.
BUILT_IN_KINDS = (
    BuiltInKind(
        "io.k8s.api.core.v1.Pod", "", "v1", "Pod", "pods", ("status", "log", "ephemeralcontainers")
    ),
    BuiltInKind("io.k8s.api.core.v1.Event", "", "v1", "Event", "events"),
    BuiltInKind(
        "io.k8s.api.core.v1.Namespace", "", "v1", "Namespace", "namespaces", ("status",), False
    ),
    BuiltInKind(
        "io.k8s.api.networking.v1.Ingress",
        "networking.k8s.io",
        "v1",
        "Ingress",
        "ingresses",
        ("status",),
    ),
)


@dataclass(frozen=True)
class PropertyType:
    """The expected type of one property of a Kubernetes definition."""

    shape: str  # "ref", "array", "map", "string", "integer", "number", "boolean", "int-or-string", "free"
    ref: str | None = None  # definition name, for shape "ref"
    inner: PropertyType | None = None  # for array / map
    format: str | None = None
    quantity: bool = False


@dataclass
class Definition:
    """One object definition: its properties and their expected types."""

    name: str  # full name, e.g. io.k8s.api.core.v1.Container
    description: str
    properties: dict[str, PropertyType]
    descriptions: dict[str, str]
    required: tuple[str, ...]
    list_types: dict[str, tuple[str | None, tuple[str, ...]]] = field(default_factory=dict)

    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[1]

    @property
    def module(self) -> str:
        """The flarekit_models module this type belongs in, e.g. ``core.v1``."""
        parts = self.name.split(".")
        if self.name.startswith("io.k8s.apimachinery.pkg.apis.meta."):
            return "meta." + parts[-2]
        if self.name.startswith("io.k8s.api."):
            return f"{parts[3]}.{parts[4]}"
        raise ValueError(f"no module for Kubernetes definition {self.name}")


def _type_list(raw: dict[str, Any]) -> list[str]:
    kind = raw.get("type")
    if kind is None:
        return []
    kinds = kind if isinstance(kind, list) else [kind]
    return [k for k in kinds if k != "null"]


class KubernetesDefinitions:
    """The object definitions of one Kubernetes release, indexed for matching."""

    def __init__(self, raw_defs: dict[str, Any]) -> None:
        self._raw = raw_defs
        self.definitions: dict[str, Definition] = {}
        for name, raw in raw_defs.items():
            if name in SCALAR_ALIASES or name in FREE_FORM:
                continue
            if not raw.get("properties"):
                continue
            self.definitions[name] = self._read_definition(name, raw)

    @classmethod
    def load(cls, version: str = KUBERNETES_VERSION) -> KubernetesDefinitions:
        base = resources.files("kubernetes_validate") / "kubernetes-json-schema"
        path = base / f"{version}-local" / "_definitions.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(data.get("$defs", data.get("definitions", {})))

    def _read_definition(self, name: str, raw: dict[str, Any]) -> Definition:
        props: dict[str, PropertyType] = {}
        docs: dict[str, str] = {}
        list_types: dict[str, tuple[str | None, tuple[str, ...]]] = {}
        for prop, schema in raw["properties"].items():
            props[prop] = self._property_type(schema)
            docs[prop] = str(schema.get("description", "")).strip()
            if "x-kubernetes-list-type" in schema:
                list_types[prop] = (
                    schema.get("x-kubernetes-list-type"),
                    tuple(schema.get("x-kubernetes-list-map-keys", ())),
                )
        return Definition(
            name=name,
            description=str(raw.get("description", "")).strip(),
            properties=props,
            descriptions=docs,
            required=tuple(sorted(raw.get("required", ()))),
            list_types=list_types,
        )

    def _property_type(self, schema: dict[str, Any]) -> PropertyType:
        ref = schema.get("$ref")
        if ref:
            target = ref.removeprefix(_REF_PREFIX)
            if target in SCALAR_ALIASES:
                return PropertyType(
                    SCALAR_ALIASES[target],
                    quantity=target == QUANTITY,
                    format="date-time" if SCALAR_ALIASES[target] == "string" else None,
                )
            if target in FREE_FORM:
                return PropertyType("free")
            target_raw = self._raw.get(target, {})
            if not target_raw.get("properties"):
                kinds = _type_list(target_raw)
                return PropertyType(kinds[0] if kinds else "free")
            return PropertyType("ref", ref=target)
        kinds = _type_list(schema)
        kind = kinds[0] if kinds else "free"
        if kind == "array":
            return PropertyType("array", inner=self._property_type(schema.get("items", {})))
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                return PropertyType("map", inner=self._property_type(extra))
            return PropertyType("free")
        return PropertyType(kind, format=schema.get("format"))

    @cached_property
    def by_property(self) -> dict[str, set[str]]:
        """Property name -> definitions having it (for candidate pre-filtering)."""
        index: dict[str, set[str]] = {}
        for name, definition in self.definitions.items():
            for prop in definition.properties:
                index.setdefault(prop, set()).add(name)
        return index

    def closure(self, roots: set[str]) -> set[str]:
        """Every definition reachable from ``roots`` through properties."""
        seen: set[str] = set()
        stack = sorted(roots)
        while stack:
            name = stack.pop()
            if name in seen or name not in self.definitions:
                continue
            seen.add(name)
            for prop_type in self.definitions[name].properties.values():
                ref = _ref_of(prop_type)
                if ref:
                    stack.append(ref)
        return seen

    def node_for(self, name: str) -> Node:
        """The IR node of a definition; references stay references (``core_type``)."""
        definition = self.definitions[name]
        properties = {prop: _node_of(t) for prop, t in definition.properties.items()}
        for prop, (list_type, keys) in definition.list_types.items():
            properties[prop].list_type = list_type
            properties[prop].list_map_keys = keys
        for prop, doc in definition.descriptions.items():
            properties[prop].description = doc
        return Node(
            shape="object",
            description=definition.description,
            properties=dict(sorted(properties.items())),
            required=definition.required,
            core_type=name,
        )


def _ref_of(prop_type: PropertyType) -> str | None:
    while prop_type.inner is not None:
        prop_type = prop_type.inner
    return prop_type.ref


def _node_of(prop_type: PropertyType) -> Node:
    if prop_type.shape == "ref":
        return Node(shape="object", core_type=prop_type.ref)
    if prop_type.shape == "array":
        assert prop_type.inner is not None
        return Node(shape="array", items=_node_of(prop_type.inner))
    if prop_type.shape == "map":
        assert prop_type.inner is not None
        return Node(shape="map", values=_node_of(prop_type.inner))
    if prop_type.shape == "int-or-string":
        return Node(shape="int-or-string", pattern=QUANTITY_PATTERN if prop_type.quantity else None)
    if prop_type.shape in ("string", "integer", "number", "boolean"):
        return Node(shape=prop_type.shape, format=prop_type.format)  # type: ignore[arg-type]
    return Node(shape="free")
