"""Discovery documents: /version, /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>.

Clients (kubectl, dynamic clients, flarekit's own capability checks) learn what a cluster
serves from these; the shapes and orderings follow the apiextensions discovery controller
(preferred version = highest Kubernetes version priority among served versions, not the
storage version).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from flarekit_testing.apiserver._resources import Registry, ResourceType

JSON = dict[str, Any]

KUBERNETES_VERSION = {
    "major": "1",
    "minor": "36",
    "gitVersion": "v1.36.3+flarekit.fake",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.26.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}

CRD_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
SUBRESOURCE_VERBS = ["get", "patch", "update"]


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Hash of group/version/kind as the apiserver publishes it (first 8 bytes of sha256)."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def version() -> JSON:
    return dict(KUBERNETES_VERSION)


def core_versions(address: str) -> JSON:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def core_resources(registry: Registry) -> JSON:
    """/api/v1: the core kinds and their subresources."""
    resources: list[JSON] = []
    for rt in sorted(registry, key=lambda t: t.plural):
        if rt.group == "":
            resources.extend(_resources_for(rt, "v1"))
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": resources}


def _group(name: str, versions: list[str]) -> JSON:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def group_list(registry: Registry) -> JSON:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(g, vs) for g, vs in registry.groups().items()],
    }


def group(registry: Registry, name: str) -> JSON | None:
    versions = registry.groups().get(name)
    if not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, versions)}


def _resources_for(rt: ResourceType, version: str) -> list[JSON]:
    v = rt.version(version)
    if v is None:
        return []
    main: JSON = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(rt.verbs or CRD_VERBS),
    }
    if rt.short_names:
        main["shortNames"] = list(rt.short_names)
    if rt.categories:
        main["categories"] = list(rt.categories)
    main["storageVersionHash"] = storage_version_hash(rt.group, rt.storage_version, rt.kind)
    out = [main]
    if rt.group == "" and rt.plural == "pods":
        out.append(
            {
                "name": "pods/log",
                "singularName": "",
                "namespaced": True,
                "kind": "Pod",
                "verbs": ["get"],
            }
        )
    if v.status_subresource:
        out.append(
            {
                "name": f"{rt.plural}/status",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": SUBRESOURCE_VERBS,
            }
        )
    if v.scale is not None:
        out.append(
            {
                "name": f"{rt.plural}/scale",
                "singularName": "",
                "namespaced": rt.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": SUBRESOURCE_VERBS,
            }
        )
    return out


def resource_list(registry: Registry, group_name: str, version_name: str) -> JSON | None:
    resources: list[JSON] = []
    for rt in sorted(registry, key=lambda t: t.plural):
        if rt.group == group_name:
            resources.extend(_resources_for(rt, version_name))
    if not resources:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group_name}/{version_name}",
        "resources": resources,
    }
