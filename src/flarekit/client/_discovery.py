"""The discovery documents flarekit reads, as models: the aggregated discovery of every group,
version and kind (``/apis`` as kube-apiserver 1.30+ serves it, ``apidiscovery.k8s.io/v2``), and
the older documents (``/apis``, ``/apis/<group>``, ``/apis/<group>/<version>``, ``/version``)
that servers without it answer.

Why: which versions of a group the server serves, and which Kubernetes release it runs, are
read from these documents; reading them through models keeps that code in attributes (a
field read is a field checked) instead of chains of ``.get``. Only the fields flarekit
uses are declared; the rest are kept as every model keeps unknown fields. Kubernetes
defines these types in Go (``metav1.APIGroupList``, ``version.Info``) without a CRD, so they
are written here rather than generated. A module of its own so that the classes are built
only when discovery is read.
"""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import Field, ValidationError

from flarekit.client._errors import ApiError, Operation
from flarekit_models import KubeModel

__all__ = [
    "AGGREGATED",
    "APIGroup",
    "APIGroupDiscovery",
    "APIGroupDiscoveryList",
    "APIGroupList",
    "APIResource",
    "APIResourceDiscovery",
    "APIResourceList",
    "APIVersionDiscovery",
    "GroupVersion",
    "ServerVersion",
    "read_document",
]

#: The media types of aggregated discovery, newest first; a server that serves neither
#: answers the plain document (``application/json``, the last choice).
AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
)


class GroupVersion(KubeModel):
    """One version of a group (``metav1.GroupVersionForDiscovery``)."""

    group_version: str = Field("", alias="groupVersion")
    version: str = ""


class APIGroup(KubeModel):
    """A group and the versions the server serves of it (``/apis/<group>``)."""

    name: str = ""
    versions: list[GroupVersion] = Field(default_factory=list)
    preferred_version: GroupVersion | None = Field(None, alias="preferredVersion")

    def served_versions(self) -> list[str]:
        """The served versions, the preferred one first."""
        versions = [v.version for v in self.versions if v.version]
        preferred = self.preferred_version.version if self.preferred_version else ""
        if preferred in versions:
            versions.remove(preferred)
            versions.insert(0, preferred)
        return versions


class APIGroupList(KubeModel):
    """Every group the server serves (``/apis``)."""

    groups: list[APIGroup] = Field(default_factory=list)


class APIResource(KubeModel):
    """One entry of ``/apis/<group>/<version>`` (``metav1.APIResource``)."""

    name: str = ""
    kind: str = ""
    storage_version_hash: str | None = Field(None, alias="storageVersionHash")


class APIResourceList(KubeModel):
    """What ``/apis/<group>/<version>`` lists."""

    resources: list[APIResource] = Field(default_factory=list)


class GroupVersionKind(KubeModel):
    group: str = ""
    version: str = ""
    kind: str = ""


class APIResourceDiscovery(KubeModel):
    """One resource of a version in aggregated discovery (``apidiscovery/v2``)."""

    resource: str = ""
    response_kind: GroupVersionKind | None = Field(None, alias="responseKind")
    scope: str = ""
    verbs: list[str] = Field(default_factory=list)


class APIVersionDiscovery(KubeModel):
    version: str = ""
    resources: list[APIResourceDiscovery] = Field(default_factory=list)

    def kinds(self) -> frozenset[str]:
        return frozenset(r.response_kind.kind for r in self.resources if r.response_kind)


class DiscoveryName(KubeModel):
    name: str = ""


class APIGroupDiscovery(KubeModel):
    """One group in aggregated discovery; its versions are listed preferred first."""

    metadata: DiscoveryName = Field(default_factory=DiscoveryName)
    versions: list[APIVersionDiscovery] = Field(default_factory=list)


class APIGroupDiscoveryList(KubeModel):
    """Every group, version and resource the server serves, in one document."""

    items: list[APIGroupDiscovery] = Field(default_factory=list)


class ServerVersion(KubeModel):
    """The server's build (``/version``)."""

    git_version: str = Field("", alias="gitVersion")


D = TypeVar("D", bound=KubeModel)


def read_document(model: type[D], path: str, body: bytes) -> D:
    """The discovery document `body` (the answer to GET `path`) as `model`; an answer that
    is not such a document is an `ApiError` naming the path."""
    try:
        return model.model_validate(json.loads(body or b"{}"))
    except (ValueError, ValidationError):  # not JSON, or not shaped like the document
        raise ApiError(
            Operation("get", path),
            200,
            "BadDiscovery",
            f"the answer to GET {path} is not a {model.__name__} document",
        ) from None
