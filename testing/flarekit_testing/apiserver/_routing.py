"""From a URL and method to a resource request and its verb, and from the verb to a handler.

kube-apiserver's URL scheme is regular: `/api/v1/...` for the core group,
`/apis/<group>/<version>/...` for the others, then an optional `namespaces/<ns>/`, the
resource, an optional name and subresource. The verb follows from the method and whether a
name is given (`GET` of a collection is `list`, or `watch` with `?watch=true`). What is not a
resource URL (discovery, OpenAPI, health) is left to `_nonresource`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flarekit_testing.apiserver import _crd_api, _deletes, _errors, _reads, _writes
from flarekit_testing.apiserver._request import Request, Response
from flarekit_testing.apiserver._resources import Registry, ResourceType, Version
from flarekit_testing.apiserver._store import Store

#: (method, whether a name is given) -> verb; GET becomes `watch` with ?watch=true.
VERBS = {
    ("GET", True): "get",
    ("GET", False): "list",
    ("POST", False): "create",
    ("PUT", True): "update",
    ("PATCH", True): "patch",
    ("DELETE", True): "delete",
    ("DELETE", False): "deletecollection",
}
SUBRESOURCE_VERBS = ("get", "update", "patch")

HANDLERS: dict[str, Callable[[Store, Request], Response]] = {
    "get": _reads.get,
    "list": _reads.list_objects,
    "create": _writes.create,
    "update": _writes.update,
    "patch": _writes.patch,
    "delete": _deletes.delete,
    "deletecollection": _deletes.delete_collection,
}


@dataclass
class Route:
    """A resolved resource URL."""

    request: Request
    verb: str


def _split(path: str) -> tuple[str, str, list[str]] | None:
    """(group, version, the rest) of a resource URL; None for any other path."""
    parts = path.strip("/").split("/")
    if parts[:2] == ["api", "v1"] and len(parts) >= 3:
        return "", "v1", parts[2:]
    if parts[0] == "apis" and len(parts) >= 4:
        return parts[1], parts[2], parts[3:]
    return None


def _subresource_served(rt: ResourceType, version: Version, subresource: str) -> bool:
    if subresource == "status":
        return version.status_subresource
    if subresource == "scale":
        return version.scale is not None
    return subresource == "log" and rt.group == "" and rt.plural == "pods"


def _verb(method: str, rt: ResourceType, name: str, subresource: str, watching: bool) -> str:
    verb = VERBS.get((method, bool(name)))
    if verb == "get" and watching:
        verb = "watch"
    if verb == "list" and watching:
        verb = "watch"
    if verb is None or (subresource and verb not in SUBRESOURCE_VERBS):
        raise _errors.method_not_allowed()
    if subresource == "log" and verb != "get":
        raise _errors.method_not_allowed()
    if rt.verbs is not None and verb not in rt.verbs and not subresource:
        raise _errors.method_not_allowed()
    return verb


def resolve(
    registry: Registry,
    method: str,
    path: str,
    query: dict[str, list[str]],
    body: bytes,
    content_type: str,
    user_agent: str,
) -> Route | None:
    """The resource request a URL names, or None for non-resource paths; 404/405 otherwise."""
    split = _split(path)
    if split is None:
        return None
    group, version_name, rest = split
    if group == _crd_api.GROUP:
        return None  # served read-only by _crd_api
    namespace = ""
    # /api/v1/namespaces/<ns>/status is the namespace's own subresource, not a resource
    namespace_subresource = group == "" and len(rest) == 3 and rest[2] in ("status", "finalize")
    if rest[0] == "namespaces" and len(rest) >= 3 and not namespace_subresource:
        namespace, rest = rest[1], rest[2:]
    rt = registry.lookup(group, rest[0])
    version = rt.version(version_name) if rt is not None else None
    if rt is not None and not rt.builtin and namespace and not rt.namespaced:
        raise _errors.page_not_found()  # the CRD handler passes it on; nothing else serves it
    if rt is None or version is None or (namespace and not rt.namespaced) or len(rest) > 3:
        raise _errors.generic_not_found()
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if subresource and not _subresource_served(rt, version, subresource):
        raise _errors.generic_not_found()
    if rt.namespaced and name and not namespace:
        raise _errors.generic_not_found()
    watching = (query.get("watch") or [""])[-1].lower() in ("1", "true")
    verb = _verb(method, rt, name, subresource, watching)
    if rt.namespaced and not namespace and verb in ("create", "deletecollection"):
        raise _errors.method_not_allowed()
    if verb == "watch" and name:
        query = {**query, "fieldSelector": [f"metadata.name={name}"]}
        name = ""
    req = Request(
        method, rt, version, namespace, name, subresource, query, body, content_type, user_agent
    )
    return Route(req, verb)


def dispatch(store: Store, route: Route) -> Response:
    return HANDLERS[route.verb](store, route.request)
