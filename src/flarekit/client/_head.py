"""What a Kubernetes object given as JSON says it is, read before its kind's model is chosen.

Why: JSON reaches the facade whose kind is not known yet: an object a user hands to
``from_raycluster``, a template inside an AppWrapper, a merge patch. Its ``apiVersion`` and
``kind`` decide which model reads the rest, so they are read first, through this small model
rather than by string keys. The input is not trusted to be well formed: a value of the wrong
type reads as absent (the kind's own model, or the API server, names it afterwards).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ObjectHead", "head_of"]


class HeadMetadata(BaseModel):
    """The name and namespace of the object (empty when absent or not a string), and its
    labels (as text)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = Field(default_factory=dict)

    @field_validator("name", "namespace", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return value if isinstance(value, str) else ""

    @field_validator("labels", mode="before")
    @classmethod
    def _pairs(cls, value: object) -> dict[str, str]:
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


class ObjectHead(BaseModel):
    """``apiVersion``, ``kind`` and the name, namespace and labels of an object (JSON)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)

    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: HeadMetadata = Field(default_factory=HeadMetadata)

    @field_validator("api_version", "kind", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return value if isinstance(value, str) else ""

    @field_validator("metadata", mode="before")
    @classmethod
    def _mapping(cls, value: object) -> object:
        return value if isinstance(value, Mapping) else {}

    @property
    def type_text(self) -> str:
        """``apiVersion kind`` as a user would name the type (``ray.io/v1 RayCluster``)."""
        return f"{self.api_version} {self.kind}".strip()


def head_of(data: object) -> ObjectHead:
    """The head of `data` (any JSON value: one that is not an object has an empty head)."""
    return ObjectHead.model_validate(data if isinstance(data, Mapping) else {})
