"""The control plane's own way in: JSON over HTTPS as its administrator, standard library only.

`ControlPlane` seeds and inspects objects the way FakeCluster's direct access does (`create`,
`get`, `objects`, `patch`, `set_status`, `delete`), but through the real API server, so that the
same test code drives both. It must not depend on flarekit's production client, which is what
the tests exercise. Failures raise the same `ApiError` as FakeCluster's direct access, built
from the server's `Status` body.
"""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flarekit_testing.apiserver import ApiError, ResourceType, Version

JSON = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"


@dataclass(frozen=True)
class Endpoint:
    """Where the API server is and how the administrator authenticates."""

    host: str
    port: int
    ca_file: Path
    token: str


class Rest:
    """A minimal API client: one request per call, JSON in and out."""

    def __init__(self, endpoint: Endpoint, timeout: float = 30.0) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._ssl = ssl.create_default_context(cafile=str(endpoint.ca_file))
        self._types: dict[str, ResourceType] = {}

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        expect_json: bool = True,
    ) -> Any:
        if query:
            path = f"{path}?{urllib.parse.urlencode(query)}"
        conn = http.client.HTTPSConnection(
            self.endpoint.host, self.endpoint.port, timeout=self.timeout, context=self._ssl
        )
        headers = {
            "Authorization": f"Bearer {self.endpoint.token}",
            "Accept": "application/json",
            "User-Agent": "flarekit-controlplane/direct",
        }
        payload = None
        if body is not None:
            payload = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        if response.status >= 400:
            raise _error(response.status, data)
        if not expect_json:
            return data.decode(errors="replace")
        return json.loads(data) if data else None

    # -- resource types, from discovery -------------------------------------------------------

    def served_resources(self) -> set[tuple[str, str, str]]:
        """(group, version, plural) of every resource the server serves now, from one
        aggregated discovery request (apidiscovery.k8s.io/v2)."""
        conn = http.client.HTTPSConnection(
            self.endpoint.host, self.endpoint.port, timeout=self.timeout, context=self._ssl
        )
        try:
            conn.request(
                "GET",
                "/apis",
                headers={
                    "Authorization": f"Bearer {self.endpoint.token}",
                    "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
                    "User-Agent": "flarekit-controlplane/direct",
                },
            )
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        if response.status >= 400:
            raise _error(response.status, data)
        found: set[tuple[str, str, str]] = set()
        for group in json.loads(data).get("items", []):
            for version in group.get("versions", []):
                for res in version.get("resources", []):
                    found.add((group["metadata"]["name"], version["version"], res["resource"]))
        return found

    def resource(self, name: str) -> ResourceType | None:
        """A served resource by plural, `plural.group`, kind, singular or short name."""
        if not self._types:
            self._discover()
        key = name.lower()
        if key in self._types:
            return self._types[key]
        return None

    def forget_types(self) -> None:
        self._types.clear()

    def _discover(self) -> None:
        groups: list[tuple[str, list[str], str]] = [("", ["v1"], "v1")]
        for group in self.request("GET", "/apis")["groups"]:
            versions = [v["version"] for v in group["versions"]]
            groups.append((group["name"], versions, group["preferredVersion"]["version"]))
        storage = self._crd_storage_versions()
        for group, versions, preferred in groups:
            found: dict[str, tuple[JSON, list[str]]] = {}
            with_status: set[tuple[str, str]] = set()
            for version in versions:
                path = f"/apis/{group}/{version}" if group else "/api/v1"
                for res in self.request("GET", path)["resources"]:
                    plural, _, sub = res["name"].partition("/")
                    if sub == "status":
                        with_status.add((plural, version))
                    if not sub:
                        found.setdefault(plural, (res, []))[1].append(version)
            for plural, (res, served) in found.items():
                stored = storage.get(f"{plural}.{group}", preferred)
                rt = ResourceType(
                    group=group,
                    plural=plural,
                    singular=res.get("singularName") or res["kind"].lower(),
                    kind=res["kind"],
                    list_kind=res["kind"] + "List",
                    namespaced=bool(res["namespaced"]),
                    versions=tuple(
                        Version(
                            name=v,
                            served=True,
                            storage=v == stored,
                            schema=None,
                            status_subresource=(plural, v) in with_status,
                        )
                        for v in served
                    ),
                    short_names=tuple(res.get("shortNames") or ()),
                    categories=tuple(res.get("categories") or ()),
                )
                keys = [plural, rt.kind.lower(), rt.singular, *rt.short_names]
                keys.append(f"{plural}.{group}" if group else plural)
                for key in keys:
                    # Core kinds win over a CRD reusing a short name, as kubectl resolves them.
                    self._types.setdefault(key.lower(), rt)

    def _crd_storage_versions(self) -> dict[str, str]:
        listed = self.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        out: dict[str, str] = {}
        for crd in listed["items"]:
            stored = next((v["name"] for v in crd["spec"]["versions"] if v.get("storage")), None)
            if stored:
                out[crd["metadata"]["name"]] = stored
        return out


def collection_path(rt: ResourceType, version: str, namespace: str | None) -> str:
    base = f"/apis/{rt.group}/{version}" if rt.group else f"/api/{version}"
    if rt.namespaced and namespace:
        base += f"/namespaces/{urllib.parse.quote(namespace)}"
    return f"{base}/{rt.plural}"


def _error(status: int, data: bytes) -> ApiError:
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return ApiError(
            int(body.get("code") or status),
            str(body.get("reason") or ""),
            str(body.get("message") or ""),
            body.get("details"),
        )
    return ApiError(status, "", data.decode(errors="replace")[:2000])
