"""Non-resource paths: health checks, /version, discovery and the OpenAPI documents.

The health endpoints and /version are readable without credentials (RBAC's
`system:public-info-viewer`); `?verbose` lists the checks as kube-apiserver does. Discovery
and OpenAPI need an authenticated user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarekit_testing.apiserver import _crd_api, _discovery, _errors, _openapi
from flarekit_testing.apiserver._request import Response
from flarekit_testing.apiserver._resources import Registry

JSON = dict[str, Any]

HEALTH = ("/healthz", "/livez", "/readyz")
PUBLIC = (*HEALTH, "/version")
#: What `?verbose` lists (kube-apiserver's checks that have a meaning here).
CHECKS = ("ping", "log", "etcd", "informer-sync", "poststarthook/crd-informer-synced")


def is_public(path: str) -> bool:
    return path in PUBLIC or any(path.startswith(h + "/") for h in HEALTH)


def health(path: str, query: Mapping[str, list[str]]) -> tuple[int, str]:
    """(status, text) of a health endpoint; one check by name as `/healthz/<check>`."""
    base = next(h for h in HEALTH if path == h or path.startswith(h + "/"))
    check = path[len(base) + 1 :]
    if check:
        if check not in CHECKS:
            return 404, "404 page not found\n"
        return 200, "ok"
    if "verbose" in query:
        lines = [f"[+]{c} ok" for c in CHECKS]
        return 200, "\n".join(lines) + f"\n{base.strip('/')} check passed\n"
    return 200, "ok"


def document(registry: Registry, address: str, crds_served: bool, path: str) -> JSON:
    """The discovery or OpenAPI document at `path`; 404 for anything else."""
    parts = path.strip("/").split("/")
    doc: JSON | None = None
    if path == "/version":
        doc = _discovery.version()
    elif path == "/api":
        doc = _discovery.core_versions(address)
    elif path == "/api/v1":
        doc = _discovery.core_resources(registry)
    elif path == "/apis":
        doc = _discovery.group_list(registry)
        if crds_served:
            doc["groups"].append(_crd_api.group_entry())
    elif parts[0] == "apis" and len(parts) == 2:
        doc = _discovery.group(registry, parts[1])
    elif parts[0] == "apis" and len(parts) == 3:
        doc = _discovery.resource_list(registry, parts[1], parts[2])
    elif parts[0] == "openapi":
        doc = _openapi.serve(registry, path)
    if doc is None:
        doc = _crd_api.discovery(path)
    if doc is None:
        raise _errors.generic_not_found()
    return doc


def serve(registry: Registry, address: str, method: str, path: str, accept: str = "") -> Response:
    if method != "GET":
        raise _errors.method_not_allowed()
    if path in ("/api", "/apis") and _discovery.wants_aggregated(accept):
        extra = [] if path == "/api" else [_crd_api.aggregated_group()]
        body = _discovery.aggregated(registry, core=path == "/api", extra=extra)
        return Response(200, body, content_type=_discovery.AGGREGATED, vary="Accept")
    return Response(200, document(registry, address, True, path))
