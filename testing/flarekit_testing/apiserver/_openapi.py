"""OpenAPI v2 (`/openapi/v2`) and v3 (`/openapi/v3`, one document per group-version), built
from what is served.

kubectl reads these: `explain` walks the v3 schema of a kind, `apply` checks in the v3
document that the PATCH of a kind takes `fieldValidation` before it lets the server validate
(and would fall back to client-side validation from `/openapi/v2` otherwise). Each served
version contributes its schema (a CRD's `openAPIV3Schema`, a built-in kind's structural
schema) under the name kube-apiserver gives it (`io.ray.v1.RayCluster`, `io.k8s.api.core.
v1.Pod`), with `x-kubernetes-group-version-kind`, `metadata` referring to ObjectMeta, a
`<Kind>List`, and the paths and operations of the resource with their query parameters.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Iterable
from typing import Any

from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._resources import Registry, ResourceType, Version

JSON = dict[str, Any]

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_STRING = {"type": "string"}
_META_SCHEMAS: dict[str, JSON] = {
    "ObjectMeta": {
        "description": "ObjectMeta is metadata that all persisted resources must have.",
        "type": "object",
        "properties": {
            "annotations": {"type": "object", "additionalProperties": _STRING},
            "creationTimestamp": {"$ref": f"#/components/schemas/{META}.Time"},
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
            "deletionTimestamp": {"$ref": f"#/components/schemas/{META}.Time"},
            "finalizers": {"type": "array", "items": _STRING, "x-kubernetes-list-type": "set"},
            "generateName": _STRING,
            "generation": {"type": "integer", "format": "int64"},
            "labels": {"type": "object", "additionalProperties": _STRING},
            "managedFields": {"type": "array", "items": {"type": "object"}},
            "name": _STRING,
            "namespace": _STRING,
            "ownerReferences": {
                "type": "array",
                "items": {"type": "object"},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["uid"],
                "x-kubernetes-patch-merge-key": "uid",
                "x-kubernetes-patch-strategy": "merge",
            },
            "resourceVersion": _STRING,
            "selfLink": _STRING,
            "uid": _STRING,
        },
    },
    "ListMeta": {
        "description": "ListMeta describes metadata that synthetic resources must have.",
        "type": "object",
        "properties": {
            "continue": _STRING,
            "remainingItemCount": {"type": "integer", "format": "int64"},
            "resourceVersion": _STRING,
            "selfLink": _STRING,
        },
    },
    "Time": {"description": "An RFC 3339 date and time.", "type": "string", "format": "date-time"},
    "Patch": {"description": "Patch is provided to give a concrete name and type.", "type": "object"},
    "Status": {"description": "Status is a return value for calls that don't return other objects.", "type": "object"},
    "DeleteOptions": {"description": "DeleteOptions may be provided when deleting an API object.", "type": "object"},
}  # fmt: skip

_PARAMETERS = {
    "get": ("pretty", "resourceVersion"),
    "list": (
        *("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit"),
        *("pretty", "resourceVersion", "resourceVersionMatch", "sendInitialEvents"),
        *("timeoutSeconds", "watch"),
    ),
    "create": ("dryRun", "fieldManager", "fieldValidation", "pretty"),
    "update": ("dryRun", "fieldManager", "fieldValidation", "pretty"),
    "patch": ("dryRun", "fieldManager", "fieldValidation", "force", "pretty"),
    "delete": ("dryRun", "gracePeriodSeconds", "propagationPolicy", "pretty"),
    "deletecollection": (
        *("continue", "dryRun", "fieldSelector", "gracePeriodSeconds", "labelSelector"),
        *("limit", "propagationPolicy", "resourceVersion", "timeoutSeconds", "pretty"),
    ),
}
_INTEGER_PARAMETERS = ("gracePeriodSeconds", "limit", "timeoutSeconds")
_BOOLEAN_PARAMETERS = ("allowWatchBookmarks", "force", "sendInitialEvents", "watch")
_ACTIONS = {
    "get": ("get", "read"),
    "list": ("get", "list"),
    "create": ("post", "create"),
    "update": ("put", "replace"),
    "patch": ("patch", "patch"),
    "delete": ("delete", "delete"),
    "deletecollection": ("delete", "deletecollection"),
}
_K8S_ACTIONS = {
    "get": "get",
    "list": "list",
    "create": "post",
    "update": "put",
    "patch": "patch",
    "delete": "delete",
    "deletecollection": "deletecollection",
}
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
)


def definition_name(rt: ResourceType, version: str, kind: str | None = None) -> str:
    """kube-apiserver's schema name: reversed group (`io.ray`), version, kind."""
    kind = kind or rt.kind
    if rt.builtin:
        group = rt.group.split(".")[0] if rt.group else "core"
        return f"io.k8s.api.{group}.{version}.{kind}"
    return ".".join(reversed(rt.group.split("."))) + f".{version}.{kind}"


def _gvk(rt: ResourceType, version: str, kind: str | None = None) -> JSON:
    return {"group": rt.group, "version": version, "kind": kind or rt.kind}


def _ref(name: str, v3: bool) -> JSON:
    return {"$ref": f"#/components/schemas/{name}" if v3 else f"#/definitions/{name}"}


def _kind_schema(rt: ResourceType, version: Version, v3: bool) -> JSON:
    schema: JSON = copy_json(version.schema) if version.schema else {"type": "object"}
    schema.setdefault("type", "object")
    props = schema.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    meta = _ref(f"{META}.ObjectMeta", v3)
    props["metadata"] = {"description": "Standard object's metadata.", "allOf": [meta]}
    schema["x-kubernetes-group-version-kind"] = [_gvk(rt, version.name)]
    return schema


def _list_schema(rt: ResourceType, version: Version, v3: bool) -> JSON:
    return {
        "description": f"{rt.list_kind} is a list of {rt.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"type": "array", "items": _ref(definition_name(rt, version.name), v3)},
            "kind": {"type": "string"},
            "metadata": {"allOf": [_ref(f"{META}.ListMeta", v3)]},
        },
        "x-kubernetes-group-version-kind": [_gvk(rt, version.name, rt.list_kind)],
    }


def _parameter(name: str, v3: bool) -> JSON:
    kind = (
        "integer"
        if name in _INTEGER_PARAMETERS
        else "boolean" if name in _BOOLEAN_PARAMETERS else "string"
    )
    out: JSON = {"name": name, "in": "query", "description": f"the {name} option"}
    if v3:
        out["schema"] = {"type": kind, "uniqueItems": True}
    else:
        out.update(type=kind, uniqueItems=True)
    return out


def _operation(rt: ResourceType, version: str, verb: str, v3: bool, what: str) -> JSON:
    _, action = _ACTIONS[verb]
    op: JSON = {
        "description": f"{action} {what}",
        "operationId": f"{action}{rt.kind}",
        "parameters": [_parameter(p, v3) for p in _PARAMETERS[verb]],
        "responses": {"200": {"description": "OK"}, "401": {"description": "Unauthorized"}},
        "x-kubernetes-action": _K8S_ACTIONS[verb],
        "x-kubernetes-group-version-kind": _gvk(rt, version),
    }
    body_ref = _ref(definition_name(rt, version), v3)
    if verb == "patch":
        patch = _ref(f"{META}.Patch", v3)
        if v3:
            op["requestBody"] = {
                "content": {t: {"schema": patch} for t in _PATCH_TYPES},
                "required": True,
            }
        else:
            op["parameters"].append(
                {"name": "body", "in": "body", "required": True, "schema": patch}
            )
            op["consumes"] = list(_PATCH_TYPES)
    elif verb in ("create", "update"):
        if v3:
            content = {t: {"schema": body_ref} for t in ("application/json", "application/yaml")}
            op["requestBody"] = {"content": content, "required": True}
        else:
            op["parameters"].append(
                {"name": "body", "in": "body", "required": True, "schema": body_ref}
            )
    return op


def _paths(rt: ResourceType, version: Version, v3: bool) -> dict[str, JSON]:
    base = f"/api/{version.name}" if not rt.group else f"/apis/{rt.group}/{version.name}"
    scope = f"{base}/namespaces/{{namespace}}" if rt.namespaced else base
    verbs = set(rt.verbs or _ACTIONS)
    out: dict[str, JSON] = {}

    def add(path: str, verb_list: Iterable[str], what: str) -> None:
        methods = {}
        for verb in verb_list:
            if verb in verbs:
                methods[_ACTIONS[verb][0]] = _operation(rt, version.name, verb, v3, what)
        if methods:
            out[path] = methods

    add(
        f"{scope}/{rt.plural}", ("list", "create", "deletecollection"), f"objects of kind {rt.kind}"
    )
    add(
        f"{scope}/{rt.plural}/{{name}}",
        ("get", "update", "patch", "delete"),
        f"the specified {rt.kind}",
    )
    if version.status_subresource:
        add(
            f"{scope}/{rt.plural}/{{name}}/status",
            ("get", "update", "patch"),
            f"status of the specified {rt.kind}",
        )
    if rt.namespaced and "list" in verbs:
        add(f"{base}/{rt.plural}", ("list",), f"objects of kind {rt.kind}")
    return out  # fmt: skip


def _group_version(rt: ResourceType) -> Iterable[tuple[str, Version]]:
    for version in rt.served_versions:
        key = f"api/{version.name}" if not rt.group else f"apis/{rt.group}/{version.name}"
        yield key, version


def _meta_schemas(v3: bool) -> dict[str, JSON]:
    text = json.dumps(_META_SCHEMAS)
    if not v3:
        text = text.replace("#/components/schemas/", "#/definitions/")
    return {f"{META}.{name}": schema for name, schema in json.loads(text).items()}


def v3_document(registry: Registry, group_version: str) -> JSON | None:
    paths: dict[str, JSON] = {}
    schemas = _meta_schemas(True)
    for rt in registry:
        for key, version in _group_version(rt):
            if key != group_version:
                continue
            paths.update(_paths(rt, version, True))
            schemas[definition_name(rt, version.name)] = _kind_schema(rt, version, True)
            if rt.verbs is None or "list" in rt.verbs:
                schemas[definition_name(rt, version.name, rt.list_kind)] = _list_schema(
                    rt, version, True
                )
    if not paths:
        return None
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.36.3"},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


def v3_index(registry: Registry) -> JSON:
    keys = sorted({key for rt in registry for key, _ in _group_version(rt)})
    out: JSON = {}
    for key in keys:
        doc = v3_document(registry, key)
        digest = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest().upper()
        out[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": out}


def v2_document(registry: Registry) -> JSON:
    paths: dict[str, JSON] = {}
    definitions = _meta_schemas(False)
    for rt in registry:
        for _, version in _group_version(rt):
            paths.update(_paths(rt, version, False))
            schema = json.loads(
                json.dumps(_kind_schema(rt, version, False)).replace(
                    "#/components/schemas/", "#/definitions/"
                )
            )
            definitions[definition_name(rt, version.name)] = schema
            if rt.verbs is None or "list" in rt.verbs:
                definitions[definition_name(rt, version.name, rt.list_kind)] = _list_schema(
                    rt, version, False
                )
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.36.3"},
        "paths": dict(sorted(paths.items())),
        "definitions": dict(sorted(definitions.items())),
    }


_CACHE: weakref.WeakKeyDictionary[Registry, dict[str, JSON | None]] = weakref.WeakKeyDictionary()


def serve(registry: Registry, path: str) -> JSON | None:
    """The document at an /openapi path, or None (built once per registry: it never changes)."""
    cache = _CACHE.setdefault(registry, {})
    if path not in cache:
        if path == "/openapi/v2":
            cache[path] = v2_document(registry)
        elif path == "/openapi/v3":
            cache[path] = v3_index(registry)
        elif path.startswith("/openapi/v3/"):
            cache[path] = v3_document(registry, path[len("/openapi/v3/") :])
        else:
            return None
    return cache[path]
