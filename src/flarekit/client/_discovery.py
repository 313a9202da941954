"""The discovery documents flarekit reads (``/apis``, ``/apis/<group>``, ``/version``), as
models.

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
from flarekit_models._base import KubeModel

__all__ = ["APIGroup", "APIGroupList", "GroupVersion", "ServerVersion", "read_document"]


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
