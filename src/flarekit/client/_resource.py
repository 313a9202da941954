"""From a model class and a namespace to an apiserver URL, with the scope rules checked.

Every generated model knows its group, version, plural and scope (`resource_info()`), so the
client needs no per-kind code: this module turns that into paths and resolves which namespace
a call means (explicit, from the object, or the client's default), refusing combinations that
would silently address the wrong place.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flarekit.client._errors import Operation

if TYPE_CHECKING:
    from flarekit_models import KubeResource, ResourceInfo

__all__ = ["ALL_NAMESPACES", "Target", "operation_for_path", "selector"]

#: Pass as `namespace=` to list or watch a namespaced kind in every namespace.
ALL_NAMESPACES = "*"


def _quote(segment: str) -> str:
    if not segment or "/" in segment or segment in (".", ".."):
        raise ValueError(f"invalid name or namespace {segment!r}: must be non-empty, without '/'")
    return urllib.parse.quote(segment, safe="")


def info_of(kind: type[KubeResource]) -> ResourceInfo:
    """The ResourceInfo of a model class, with a clear error for anything else."""
    resource_info = getattr(kind, "resource_info", None)
    if not isinstance(kind, type) or resource_info is None:
        raise TypeError(
            f"expected a resource model class such as flarekit_models.ray.v1.RayCluster, "
            f"got {kind!r}"
        )
    info: ResourceInfo = resource_info()
    return info


@dataclass(frozen=True)
class Target:
    """One resource type in one namespace (or all, or none for cluster-scoped kinds)."""

    info: ResourceInfo
    namespace: str  # "" for cluster-scoped kinds and for all namespaces

    @classmethod
    def resolve(
        cls,
        kind: type[KubeResource],
        namespace: str | None,
        default_namespace: str,
        *,
        allow_all: bool = False,
    ) -> Target:
        info = info_of(kind)
        if not info.namespaced:
            if namespace not in (None, ALL_NAMESPACES):
                raise ValueError(
                    f"{info.kind} is cluster-scoped: do not pass a namespace (got {namespace!r})"
                )
            return cls(info, "")
        if namespace == ALL_NAMESPACES:
            if not allow_all:
                raise ValueError(
                    f"namespace={ALL_NAMESPACES!r} (all namespaces) is only allowed for list "
                    "and watch"
                )
            return cls(info, "")
        return cls(info, namespace or default_namespace)

    @property
    def resource(self) -> str:
        """`plural.group`, as the apiserver names resources in messages and RBAC."""
        return f"{self.info.plural}.{self.info.group}" if self.info.group else self.info.plural

    def path(self, name: str = "", subresource: str = "") -> str:
        info = self.info
        base = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
        if self.namespace:
            base += f"/namespaces/{_quote(self.namespace)}"
        base += f"/{info.plural}"
        if name:
            base += f"/{_quote(name)}"
        if subresource:
            if subresource not in info.subresources:
                has = ", ".join(info.subresources) or "none"
                raise ValueError(
                    f"{info.kind} ({info.api_version}) has no {subresource!r} subresource "
                    f"(it has: {has})"
                )
            base += f"/{subresource}"
        return base

    def operation(self, verb: str, name: str = "") -> Operation:
        return Operation(verb, self.resource, name, self.namespace)


def selector(value: str | Mapping[str, str] | None, what: str) -> str | None:
    """A label or field selector: strings pass through, mappings mean equality on each key."""
    if value is None or isinstance(value, str):
        return value or None
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a string or a mapping, got {type(value).__name__}")
    return ",".join(f"{k}={v}" for k, v in value.items()) or None


def operation_for_path(path: str) -> Operation:
    """The request a GET of an API path is, in Kubernetes terms, for error messages:
    ``/apis/<group>`` reads an API group, ``/apis/<group>/<version>`` its resources, longer
    paths an object or a collection."""
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
    if parts[:1] == ["apis"] and len(parts) == 2:
        return Operation("get", "apigroups", parts[1])
    if parts[:1] == ["apis"] and len(parts) == 3:
        return Operation("get", "apiresources", f"{parts[1]}/{parts[2]}")
    if parts[:1] not in (["apis"], ["api"]) or len(parts) < 3:
        return Operation("get", path)
    group, rest = (parts[1], parts[3:]) if parts[0] == "apis" else ("", parts[2:])
    if not rest:
        return Operation("get", path)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = f"{rest[0]}.{group}" if group else rest[0]
    if len(rest) > 2:
        resource += "/" + "/".join(rest[2:])
    return Operation("get", resource, rest[1] if len(rest) > 1 else "", namespace)
