"""Small builders for the structural schemas FakeCluster gives its built-in kinds.

Built-in kinds are described with the same structural schema language as CRDs, so one
engine defaults, prunes and validates them, and the same list and map types drive
server-side apply, strategic merge and the OpenAPI documents. The schemas hold what
Kubernetes' own OpenAPI says for the fields they list (types, list types and keys, patch
strategies); parts that are not spelled out keep whatever they are given.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flarekit_testing.apiserver._resources import Version

JSON = dict[str, Any]

STRING: JSON = {"type": "string"}
BOOLEAN: JSON = {"type": "boolean"}
INTEGER: JSON = {"type": "integer", "format": "int32"}
INT64: JSON = {"type": "integer", "format": "int64"}
TIME: JSON = {"type": "string", "format": "date-time"}
BYTES: JSON = {"type": "string", "format": "byte"}
INT_OR_STRING: JSON = {"x-kubernetes-int-or-string": True}
QUANTITY: JSON = {"x-kubernetes-int-or-string": True}
#: anything: kept as given (a part of a kind that is not spelled out here)
OPEN: JSON = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
METADATA: JSON = {"type": "object"}


def obj(
    properties: dict[str, JSON] | None = None,
    required: Iterable[str] = (),
    *,
    open_: bool = False,
    atomic: bool = False,
    **extra: Any,
) -> JSON:
    """An object with named properties; `open_` keeps fields not named here."""
    out: JSON = {"type": "object"}
    if properties:
        out["properties"] = properties
    if required:
        out["required"] = list(required)
    if open_:
        out["x-kubernetes-preserve-unknown-fields"] = True
    if atomic:
        out["x-kubernetes-map-type"] = "atomic"
    out.update(extra)
    return out


def map_of(value: JSON, *, atomic: bool = False) -> JSON:
    out: JSON = {"type": "object", "additionalProperties": value}
    if atomic:
        out["x-kubernetes-map-type"] = "atomic"
    return out


STRING_MAP = map_of(STRING)


def atomic_list(items: JSON) -> JSON:
    return {"type": "array", "items": items, "x-kubernetes-list-type": "atomic"}


def set_list(items: JSON, *, patch_merge: bool = False) -> JSON:
    out: JSON = {"type": "array", "items": items, "x-kubernetes-list-type": "set"}
    if patch_merge:
        out["x-kubernetes-patch-strategy"] = "merge"
    return out


def keyed_list(items: JSON, keys: Iterable[str], *, merge_key: str | None = None) -> JSON:
    """A list of objects merged by key (`x-kubernetes-list-type: map`), and by the strategic
    merge key when `merge_key` is given (`x-kubernetes-patch-merge-key`)."""
    keys = list(keys)
    out: JSON = {
        "type": "array",
        "items": items,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": keys,
    }
    if merge_key is not None:
        out["x-kubernetes-patch-strategy"] = "merge"
        out["x-kubernetes-patch-merge-key"] = merge_key
    return out


def merge_list(items: JSON, merge_key: str) -> JSON:
    """An atomic list for apply that strategic merge nevertheless merges by `merge_key`."""
    return {
        "type": "array",
        "items": items,
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-patch-merge-key": merge_key,
    }


def kind_schema(spec: JSON | None = None, status: JSON | None = None, **fields: JSON) -> JSON:
    """The root schema of a kind: apiVersion, kind, metadata, and its own fields."""
    properties: dict[str, JSON] = {"apiVersion": STRING, "kind": STRING, "metadata": METADATA}
    if spec is not None:
        properties["spec"] = spec
    if status is not None:
        properties["status"] = status
    properties.update(fields)
    return {"type": "object", "properties": properties}


OBJECT_REFERENCE = obj(
    {
        "apiVersion": STRING,
        "fieldPath": STRING,
        "kind": STRING,
        "name": STRING,
        "namespace": STRING,
        "resourceVersion": STRING,
        "uid": STRING,
    },
    atomic=True,
)
LOCAL_REFERENCE = obj({"name": STRING}, atomic=True)


def v1_versions(schema: JSON, status: bool = False) -> tuple[Version, ...]:
    return (Version("v1", True, True, schema, status_subresource=status),)
