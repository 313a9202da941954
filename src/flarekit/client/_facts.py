"""What one `Client` knows of its server: one typed object, `client.facts`.

Why: which groups, versions and kinds a server serves, what its CRDs declare and which fields
its kinds were found to lack cost requests to find out and rarely change, so each is asked
once per client and kept here, on the client, until `Client.forget()` drops them all (after
operators were installed or upgraded). Nothing else keeps server facts.

The groups come from one request: aggregated discovery (``GET /apis`` asking for
``apidiscovery.k8s.io/v2``, which kube-apiserver serves since 1.30, ``v2beta1`` since 1.27)
lists every group, its versions (preferred first) and the kinds each serves. A server without
it answers the plain group list; the kinds of a version are then read from
``/apis/<group>/<version>`` when first asked for. CRDs are read one by one, only when asked:
they are large, and listing them may be forbidden.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from flarekit._products import KUEUE_GROUP, KUEUE_VERSIONS, PRODUCTS, KueueVersion
from flarekit.client._discovery import (
    AGGREGATED,
    APIGroupDiscoveryList,
    APIGroupList,
    APIResourceList,
    read_document,
)
from flarekit.client._errors import ApiError, NotServed, not_installed

__all__ = ["CRD_PATH", "DiscoveryRead", "ServedGroup", "ServerFacts"]

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

#: How the facts are read: GET `path` asking for the media types `accept`; returns the
#: answer's media type and body, or None when the server answers 404.
DiscoveryRead = Callable[[str, str], tuple[str, bytes] | None]


@dataclass(frozen=True)
class ServedGroup:
    """One API group: its served versions, preferred first, and the kinds each version
    serves (None for a version whose kinds are not known yet)."""

    name: str
    versions: tuple[str, ...]
    kinds: Mapping[str, frozenset[str] | None]


class ServerFacts:
    """The facts one client learnt about its server; thread-safe."""

    def __init__(self, read: DiscoveryRead) -> None:
        self._read = read
        self._lock = threading.RLock()
        self._groups: dict[str, ServedGroup] | None = None
        self._crds: dict[str, bytes | ApiError | None] = {}
        self._listed: dict[tuple[str, str], APIResourceList | None] = {}
        self._fields: dict[tuple[str, str, str], bool] = {}

    def forget(self) -> None:
        """Drop everything learnt: the next question asks the server again."""
        with self._lock:
            self._groups = None
            self._crds.clear()
            self._listed.clear()
            self._fields.clear()

    # -- groups, versions and kinds ------------------------------------------------------------

    def groups(self) -> Mapping[str, ServedGroup]:
        """Every API group the server serves (one request, the first time)."""
        with self._lock:
            if self._groups is None:
                self._groups = self._discover()
            return self._groups

    def _discover(self) -> dict[str, ServedGroup]:
        answer = self._read("/apis", ",".join((*AGGREGATED, "application/json")))
        if answer is None:
            return {}
        media, body = answer
        if "as=APIGroupDiscoveryList" in media.replace(" ", ""):
            listed = read_document(APIGroupDiscoveryList, "/apis", body)
            return {
                item.metadata.name: ServedGroup(
                    item.metadata.name,
                    tuple(v.version for v in item.versions),
                    {v.version: v.kinds() for v in item.versions},
                )
                for item in listed.items
                if item.metadata.name
            }
        plain = read_document(APIGroupList, "/apis", body)
        return {
            group.name: ServedGroup(
                group.name,
                tuple(group.served_versions()),
                dict.fromkeys(group.served_versions()),
            )
            for group in plain.groups
        }

    def served_versions(self, group: str) -> list[str]:
        """The versions of `group` the server serves, its preferred version first; `NotServed`
        (naming the software to install) when it serves none."""
        found = self.groups().get(group)
        if found is None or not found.versions:
            raise not_installed(group)
        return list(found.versions)

    def preferred_version(self, group: str, supported: Sequence[str]) -> str:
        """The first of `supported` (most preferred first) the server serves for `group`."""
        served = self.served_versions(group)
        for version in supported:
            if version in served:
                return version
        product = PRODUCTS.get(group, f"the {group} API group")
        raise NotServed(
            group,
            f"{product} on this cluster serves {group} versions {', '.join(served)}; flarekit "
            f"needs one of {', '.join(supported)}",
            served,
        )

    def kueue_version(self) -> KueueVersion:
        """``"v1beta2"`` when the server serves it (Kueue 0.15 and later), else ``"v1beta1"``."""
        version = self.preferred_version(KUEUE_GROUP, KUEUE_VERSIONS)
        return "v1beta2" if version == "v1beta2" else "v1beta1"

    def kinds(self, group: str, version: str) -> frozenset[str]:
        """The kinds `group`/`version` serves (empty when it is not served)."""
        found = self.groups().get(group)
        if found is None or version not in found.kinds:
            return frozenset()
        known = found.kinds[version]
        if known is not None:
            return known
        path = f"/apis/{group}/{version}"
        answer = self._read(path, "application/json")
        listed = read_document(APIResourceList, path, answer[1]) if answer else None
        kinds = frozenset(r.kind for r in (listed.resources if listed else ()) if "/" not in r.name)
        with self._lock:
            if self._groups is not None and group in self._groups:
                self._groups[group] = ServedGroup(
                    group, found.versions, {**found.kinds, version: kinds}
                )
        return kinds

    def resource_list(self, group: str, version: str) -> APIResourceList | None:
        """The older discovery document of one version (``/apis/<group>/<version>``; None
        when it is not served): it also says, through each kind's ``storageVersionHash``,
        which version stores it, which aggregated discovery does not."""
        with self._lock:
            if (group, version) in self._listed:
                return self._listed[(group, version)]
        path = f"/apis/{group}/{version}"
        answer = self._read(path, "application/json")
        listed = read_document(APIResourceList, path, answer[1]) if answer else None
        with self._lock:
            self._listed[(group, version)] = listed
        return listed

    # -- CRDs and fields -------------------------------------------------------------------------

    def crd(self, name: str) -> bytes | None:
        """The CustomResourceDefinition `name` as the server stores it (None when there is
        none). A refusal (`Forbidden`: reading CRDs is cluster-wide and often denied) is
        kept and raised again; other failures are not kept."""
        with self._lock:
            if name in self._crds:
                known = self._crds[name]
                if isinstance(known, ApiError):
                    raise known
                return known
        try:
            answer = self._read(f"{CRD_PATH}/{name}", "application/json")
        except ApiError as exc:
            if exc.code == 403:
                with self._lock:
                    self._crds[name] = exc
            raise
        body = answer[1] if answer is not None else None
        with self._lock:
            self._crds[name] = body
        return body

    def has_field(self, api_version: str, kind: str, path: str) -> bool | None:
        """Whether the server's `kind` was found to have the field at `path` (None: not
        known yet)."""
        with self._lock:
            return self._fields.get((api_version, kind, path))

    def learn_field(self, api_version: str, kind: str, path: str, present: bool) -> None:
        """Keep what a write showed of a field: the server took it, or refused it as unknown."""
        with self._lock:
            self._fields[(api_version, kind, path)] = present
