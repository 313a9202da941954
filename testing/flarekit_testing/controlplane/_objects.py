"""Direct access to the plane's objects, around any client, as FakeCluster offers it:
`resource`, `objects`, `get`, `create`, `patch`, `set_status`, `delete`, each one request of
the direct-access user (left out of the request log)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any

from flarekit_testing.apiserver import ApiError, ResourceType
from flarekit_testing.controlplane._base import JSON, PlaneBase
from flarekit_testing.controlplane._rest import MERGE_PATCH, collection_path


class DirectAccess(PlaneBase):
    """Reading and writing objects as the plane's direct-access user."""

    def resource(self, name: str) -> ResourceType:
        """A served resource type by plural, `plural.group`, kind, singular or short name."""
        found = self.rest.resource(name)
        if found is None:
            self.rest.forget_types()
            found = self.rest.resource(name)
        if found is None:
            raise ValueError(f"unknown resource {name!r}: the API server does not serve it")
        return found

    def _path(
        self, rt: ResourceType, namespace: str | None, name: str = "", version: str | None = None
    ) -> str:
        ns = (namespace or "default") if rt.namespaced else None
        path = collection_path(rt, version or rt.storage_version, ns)
        return f"{path}/{urllib.parse.quote(name)}" if name else path

    def objects(
        self, resource: str, namespace: str | None = None, version: str | None = None
    ) -> list[JSON]:
        """Current objects of a resource (one namespace, or all when None)."""
        rt = self.resource(resource)
        path = collection_path(
            rt, version or rt.storage_version, namespace if rt.namespaced else None
        )
        listed = self.rest.request("GET", path)
        api_version = rt.api_version(version or rt.storage_version)
        return [{"apiVersion": api_version, "kind": rt.kind, **o} for o in listed["items"]]

    def get(self, resource: str, name: str, namespace: str | None = None) -> JSON | None:
        rt = self.resource(resource)
        try:
            found: JSON = self.rest.request("GET", self._path(rt, namespace, name))
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise
        return found

    def create(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> JSON:
        """Create an object as a POST does (admission, validation, defaulting)."""
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        group, _, version = api_version.rpartition("/")
        rt = self.resource(f"{kind}") if not group else self._kind(group, kind)
        meta = obj.get("metadata") or {}
        path = self._path(rt, meta.get("namespace"), version=version)
        query = {"dryRun": "All"} if dry_run else None
        created: JSON = self.rest.request("POST", path, dict(obj), query=query)
        return created

    def _kind(self, group: str, kind: str) -> ResourceType:
        rt = self.resource(f"{kind}")
        if rt.group == group:
            return rt
        for candidate in (self.rest.resource(f"{rt.plural}.{group}"),):
            if candidate is not None:
                return candidate
        raise ValueError(f"{kind} in {group} is not served")

    def patch(
        self,
        resource: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        subresource: str = "",
        content_type: str = MERGE_PATCH,
    ) -> JSON:
        """Patch an object (merge patch by default) as a PATCH request does."""
        rt = self.resource(resource)
        path = self._path(rt, namespace, name)
        if subresource:
            path += f"/{subresource}"
        patched: JSON = self.rest.request("PATCH", path, patch, content_type=content_type)
        return patched

    def set_status(
        self, resource: str, name: str, status: Mapping[str, Any], namespace: str | None = None
    ) -> JSON:
        """Merge `status` into an object's status, through /status when the resource has it."""
        rt = self.resource(resource)
        version = rt.version(rt.storage_version)
        sub = "status" if version is not None and version.status_subresource else ""
        return self.patch(resource, name, {"status": dict(status)}, namespace, subresource=sub)

    def delete(self, resource: str, name: str, namespace: str | None = None) -> JSON:
        """Delete an object as a DELETE does (finalizers respected)."""
        rt = self.resource(resource)
        deleted: JSON = self.rest.request("DELETE", self._path(rt, namespace, name))
        return deleted
