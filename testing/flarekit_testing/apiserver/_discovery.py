"""Discovery documents: /version, /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>,
and the aggregated discovery of /api and /apis (``apidiscovery.k8s.io/v2``).

Clients (kubectl, dynamic clients, flarekit's own capability checks) learn what a cluster
serves from these; the shapes and orderings follow the apiextensions discovery controller
(preferred version = highest Kubernetes version priority among served versions, not the
storage version). Aggregated discovery answers every group, version and resource in one
document to a client whose Accept header asks for it (kube-apiserver 1.30 and later; the
release this server plays serves ``v2`` only); as there, the response kind of a built-in
resource names no group or version (they are the listing's), a custom resource's does.
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


#: Kubernetes' own groups in the order kube-apiserver lists them (their priority).
_BUILT_IN = {
    name: index
    for index, name in enumerate(
        (
            "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
            "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
            "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io",
            "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
            "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io",
            "flowcontrol.apiserver.k8s.io",
        )
    )
}  # fmt: skip

#: The media type of aggregated discovery this server answers.
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether an Accept header asks for aggregated discovery before plain JSON (media
    ranges are taken in the order given; a ``q`` of 0 refuses one)."""
    for entry in accept.split(","):
        media, *params = (part.strip() for part in entry.split(";"))
        values = dict(p.partition("=")[::2] for p in params)
        if values.get("q", "1").strip() in ("0", "0.0", "0.00", "0.000"):
            continue
        if media in ("application/json", "*/*", "application/*") and not params:
            return False
        if (
            media == "application/json"
            and values.get("g") == "apidiscovery.k8s.io"
            and values.get("v") == "v2"
            and values.get("as") == "APIGroupDiscoveryList"
        ):
            return True
    return False


def _kind_of(rt: ResourceType, group: str, version: str, kind: str) -> JSON:
    if rt.builtin:
        return {"group": "", "version": "", "kind": kind}
    return {"group": group, "version": version, "kind": kind}


def _aggregated_resource(rt: ResourceType, version: str) -> JSON | None:
    listed = _resources_for(rt, version)
    if not listed:
        return None
    main, subs = listed[0], listed[1:]
    # As kube-apiserver lists them: a built-in kind's verbs and subresources sorted, a
    # custom resource's in the order its CRD gives them (status, then scale).
    ordered = sorted if rt.builtin else list
    entry: JSON = {
        "resource": rt.plural,
        "responseKind": _kind_of(rt, rt.group, version, rt.kind),
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": ordered(main["verbs"]),
    }
    for key in ("shortNames", "categories"):
        if key in main:
            entry[key] = main[key]
    if subs:
        entry["subresources"] = [
            {
                "subresource": sub["name"].partition("/")[2],
                "responseKind": (
                    {"group": sub["group"], "version": sub["version"], "kind": sub["kind"]}
                    if "group" in sub
                    else _kind_of(rt, rt.group, version, sub["kind"])
                ),
                "verbs": list(sub["verbs"]),
            }
            for sub in (sorted(subs, key=lambda s: str(s["name"])) if rt.builtin else subs)
        ]
    return entry


def _aggregated_version(registry: Registry, group_name: str, version: str) -> JSON:
    resources = [
        entry
        for rt in sorted(registry, key=lambda t: t.plural)
        if rt.group == group_name
        for entry in [_aggregated_resource(rt, version)]
        if entry is not None
    ]
    return {"version": version, "resources": resources, "freshness": "Current"}


def aggregated(registry: Registry, core: bool, extra: list[JSON] | None = None) -> JSON:
    """The aggregated discovery of /api (`core`) or /apis, with the `extra` groups (the
    apiextensions group); Kubernetes' own groups first, in their priority, then the custom
    resources' by name, as the real server orders them."""
    items: list[JSON]
    if core:
        items = [{"metadata": {}, "versions": [_aggregated_version(registry, "", "v1")]}]
    else:
        items = [
            {
                "metadata": {"name": name},
                "versions": [_aggregated_version(registry, name, v) for v in versions],
            }
            for name, versions in registry.groups().items()
        ]
        items += extra or []
        items.sort(
            key=lambda i: (
                _BUILT_IN.get(i["metadata"]["name"], len(_BUILT_IN)),
                i["metadata"]["name"],
            )
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


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
