"""The intermediate model: schema nodes, free of YAML and of Python syntax.

A :class:`Node` is one OpenAPI schema node after normalisation: its shape
(object, array, map, scalar, int-or-string, free-form), its constraints and the
Kubernetes extensions that matter to a client. Descriptions are carried for
documentation but never take part in structural identity, so two copies of the
same type that differ only in wording compare equal (:meth:`Node.structure`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Shape = Literal[
    "object",  # has declared properties: becomes a class
    "map",  # additionalProperties with a value schema: dict[str, T]
    "free",  # free-form object (preserve-unknown-fields / embedded resource / no properties)
    "array",
    "string",
    "integer",
    "number",
    "boolean",
    "int-or-string",
    "any",
]


#: The keywords that restrict the values a node accepts (beyond its shape and required set).
VALUE_CHECKS = (
    "enum",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusive_minimum",
    "exclusive_maximum",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "min_properties",
    "max_properties",
    "nullable",
    "preserve_unknown",
    "embedded_resource",
)


@dataclass
class Node:
    """One normalised schema node."""

    shape: Shape
    description: str = ""
    properties: dict[str, Node] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    items: Node | None = None  # array items
    values: Node | None = None  # map values
    enum: tuple[Any, ...] = ()
    pattern: str | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    nullable: bool = False
    default: Any = None
    has_default: bool = False
    preserve_unknown: bool = False
    embedded_resource: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    validations: tuple[dict[str, Any], ...] = ()  # CEL rules, recorded, not evaluated
    # Set by core-type recognition: the Kubernetes definition this node is a copy of.
    core_type: str | None = None
    # A copy of this definition that checks other things, so it has a class of its own
    # (see flarekit_generator.core_copies); names the class, takes no part in identity.
    copy_of: str | None = None
    _digest: str | None = field(default=None, repr=False, compare=False)

    def structure(self) -> Any:
        """A JSON-able value that identifies the node's structure, not its wording."""
        out: dict[str, Any] = {"shape": self.shape}
        for name in (
            "required",
            *VALUE_CHECKS,
            "list_type",
            "list_map_keys",
            "map_type",
            "core_type",
        ):
            value = getattr(self, name)
            if value not in (None, False, ()):
                out[name] = list(value) if isinstance(value, tuple) else value
        if self.has_default:
            out["default"] = self.default
        if self.validations:
            out["validations"] = [dict(sorted(v.items())) for v in self.validations]
        if self.properties:
            out["properties"] = {k: v.digest() for k, v in sorted(self.properties.items())}
        if self.items is not None:
            out["items"] = self.items.digest()
        if self.values is not None:
            out["values"] = self.values.digest()
        return out

    def digest(self) -> str:
        """A stable hash of :meth:`structure`: equal digests mean interchangeable types."""
        if self._digest is None:
            text = json.dumps(self.structure(), sort_keys=True, default=str)
            self._digest = hashlib.sha256(text.encode()).hexdigest()[:20]
        return self._digest

    def invalidate(self) -> None:
        """Forget cached digests after a mutation (recursively)."""
        self._digest = None
        for child in self.children():
            child.invalidate()

    def children(self) -> list[Node]:
        out = list(self.properties.values())
        if self.items is not None:
            out.append(self.items)
        if self.values is not None:
            out.append(self.values)
        return out


@dataclass(frozen=True)
class ServedVersion:
    """One ``spec.versions[]`` entry of a CRD in one upstream release."""

    name: str
    served: bool
    storage: bool
    deprecated: bool
    deprecation_warning: str | None
    subresources: tuple[str, ...]
    raw_schema: dict[str, Any] = field(compare=False, repr=False, hash=False)
    #: The scale subresource's JSON paths (specReplicasPath, ...), if it has one.
    scale: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CrdInfo:
    """A CustomResourceDefinition of one upstream release, parsed."""

    family: str
    release: str  # upstream tag
    source_path: str  # path in the upstream repository
    sha256: str
    group: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    namespaced: bool
    versions: tuple[ServedVersion, ...]
    raw_spec: dict[str, Any] = field(compare=False, repr=False, hash=False)

    @property
    def release_id(self) -> str:
        return f"{self.family}@{self.release}"
