"""What identifies any object, read as a model: its apiVersion, kind and name.

Why: a conversion or a write is chosen by the object's apiVersion and kind before its own
model is known, and error messages name the object. Reading these through one small model
(every other field kept as an unknown field, not inspected) keeps that in attributes.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ConfigDict, Field

from flarekit._json import JsonValue
from flarekit._objects import name_of
from flarekit_models import KubeModel, KubeResource

__all__ = ["ObjectHead", "head_of"]


class _Name(KubeModel):
    model_config = ConfigDict(extra="ignore")

    name: str | None = None


class ObjectHead(KubeModel):
    """apiVersion, kind and ``metadata.name`` of any object (each None when absent); the
    rest of the object is not read."""

    model_config = ConfigDict(extra="ignore")

    api_version: str | None = Field(None, alias="apiVersion")
    kind: str | None = None
    metadata: _Name | None = None

    @property
    def name(self) -> str:
        return (self.metadata.name if self.metadata else None) or ""


def head_of(obj: KubeModel | Mapping[str, JsonValue]) -> ObjectHead:
    """The :class:`ObjectHead` of a model or of an object's JSON."""
    if isinstance(obj, KubeResource):
        info = type(obj).resource_info()
        name = _Name(name=name_of(obj))
        return ObjectHead(api_version=info.api_version, kind=info.kind, metadata=name)
    return ObjectHead.model_validate(obj.to_dict() if isinstance(obj, KubeModel) else obj)
