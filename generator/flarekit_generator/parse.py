"""Parse CRD documents into the intermediate model (:mod:`flarekit_generator.ir`).

Only the keywords and Kubernetes extensions that structural schemas allow are
understood; anything else is rejected loudly so that a new upstream keyword is
noticed at generation time rather than silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarekit_generator.ir import CrdInfo, Node, ServedVersion

# Keywords we read, or knowingly ignore (documentation and printing only).
_KNOWN_KEYS = frozenset(
    {
        "type",
        "description",
        "properties",
        "required",
        "items",
        "additionalProperties",
        "enum",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "nullable",
        "default",
        "anyOf",
        "allOf",
        "oneOf",
        "not",
        "uniqueItems",
        "title",
        "example",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)


class SchemaError(ValueError):
    """A schema uses something the generator does not understand."""


def parse_schema(raw: Mapping[str, Any], path: str = "") -> Node:
    """Turn one openAPIV3Schema node (and its subtree) into a :class:`Node`."""
    unknown = set(raw) - _KNOWN_KEYS
    if unknown:
        raise SchemaError(f"{path or '<root>'}: unsupported schema keywords {sorted(unknown)}")
    node = Node(shape=_shape_of(raw, path), description=str(raw.get("description", "")).strip())
    _read_constraints(node, raw)
    if node.shape == "object":
        node.properties = {
            name: parse_schema(child, f"{path}.{name}" if path else name)
            for name, child in raw["properties"].items()
        }
        node.required = tuple(sorted(raw.get("required", ())))
    elif node.shape == "map":
        node.values = parse_schema(raw["additionalProperties"], f"{path}{{}}")
    elif node.shape == "array":
        items = raw.get("items")
        if items is not None and not isinstance(items, Mapping):
            raise SchemaError(
                f"{path or '<root>'}.items: must be one schema (structural schemas do not "
                f"allow a list of item schemas), got {type(items).__name__}"
            )
        node.items = parse_schema(items, f"{path}[]") if items else Node(shape="any")
    return node


def _shape_of(raw: Mapping[str, Any], path: str) -> Any:
    if raw.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    kind = raw.get("type")
    if kind == "object" or (kind is None and "properties" in raw):
        if raw.get("properties"):
            return "object"
        extra = raw.get("additionalProperties")
        if isinstance(extra, Mapping):
            return "map"
        return "free"
    if kind in ("array", "string", "integer", "number", "boolean"):
        return kind
    if kind is None:
        return "any"
    raise SchemaError(f"{path or '<root>'}: unsupported type {kind!r}")


def _read_constraints(node: Node, raw: Mapping[str, Any]) -> None:
    node.enum = tuple(raw.get("enum", ()))
    node.pattern = raw.get("pattern")
    node.format = raw.get("format")
    node.minimum = raw.get("minimum")
    node.maximum = raw.get("maximum")
    node.exclusive_minimum = bool(raw.get("exclusiveMinimum", False))
    node.exclusive_maximum = bool(raw.get("exclusiveMaximum", False))
    node.min_length = raw.get("minLength")
    node.max_length = raw.get("maxLength")
    node.min_items = raw.get("minItems")
    node.max_items = raw.get("maxItems")
    node.min_properties = raw.get("minProperties")
    node.max_properties = raw.get("maxProperties")
    node.nullable = bool(raw.get("nullable", False))
    if "default" in raw:
        node.default = raw["default"]
        node.has_default = True
    node.preserve_unknown = bool(raw.get("x-kubernetes-preserve-unknown-fields", False))
    node.embedded_resource = bool(raw.get("x-kubernetes-embedded-resource", False))
    node.list_type = raw.get("x-kubernetes-list-type")
    node.list_map_keys = tuple(raw.get("x-kubernetes-list-map-keys", ()))
    node.map_type = raw.get("x-kubernetes-map-type")
    node.validations = tuple(dict(rule) for rule in raw.get("x-kubernetes-validations", ()))


def _required(parent: Mapping[str, Any], key: str, source_path: str, where: str) -> Any:
    value = parent.get(key) if isinstance(parent, Mapping) else None
    if value in (None, "", [], {}):
        path = f"{where}.{key}" if where else key
        raise SchemaError(f"{source_path}: the CRD has no {path}")
    return value


def parse_crd(
    doc: Mapping[str, Any], *, family: str, release: str, source_path: str, sha256: str
) -> CrdInfo:
    """Parse one CustomResourceDefinition document."""
    if doc.get("kind") != "CustomResourceDefinition":
        raise SchemaError(
            f"{source_path}: not a CustomResourceDefinition (kind={doc.get('kind')!r})"
        )
    spec = _required(doc, "spec", source_path, "")
    names = _required(spec, "names", source_path, "spec")
    for key in ("kind", "plural"):
        _required(names, key, source_path, "spec.names")
    _required(spec, "group", source_path, "spec")
    versions = []
    for index, raw_version in enumerate(_required(spec, "versions", source_path, "spec")):
        _required(raw_version, "name", source_path, f"spec.versions[{index}]")
        root = raw_version.get("schema", {}).get("openAPIV3Schema", {"type": "object"})
        versions.append(
            ServedVersion(
                name=raw_version["name"],
                served=bool(raw_version.get("served", False)),
                storage=bool(raw_version.get("storage", False)),
                deprecated=bool(raw_version.get("deprecated", False)),
                deprecation_warning=raw_version.get("deprecationWarning"),
                subresources=tuple(sorted(raw_version.get("subresources", {}) or {})),
                raw_schema=root,
                scale=tuple(
                    sorted(((raw_version.get("subresources") or {}).get("scale") or {}).items())
                ),
            )
        )
    return CrdInfo(
        family=family,
        release=release,
        source_path=source_path,
        sha256=sha256,
        group=spec["group"],
        kind=names["kind"],
        plural=names["plural"],
        singular=names.get("singular", names["kind"].lower()),
        list_kind=names.get("listKind", names["kind"] + "List"),
        short_names=tuple(names.get("shortNames", ())),
        categories=tuple(names.get("categories", ())),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        versions=tuple(versions),
        raw_spec=dict(spec),
    )
