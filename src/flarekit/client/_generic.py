"""Resource classes for kinds without a generated model (an OpenShift Route, a Gateway API
HTTPRoute), so that the client reads them like any other kind.

Why: every request goes through `Client`, which addresses a kind by its model's
`resource_info()`. Kinds whose CRDs flarekit does not pin still need reading now and then;
`generic_resource` makes a model for one: `metadata` is typed, every other field is kept as
the JSON the server sent (the model's extras, `obj.field("spec")`).
"""

from __future__ import annotations

import threading
from typing import ClassVar

from pydantic import Field

from flarekit._json import JsonValue
from flarekit_models import KubeResource, ResourceInfo
from flarekit_models.meta.v1 import ObjectMeta

__all__ = ["GenericResource", "generic_resource"]


class GenericResource(KubeResource):
    """An object of a kind made with `generic_resource`: typed metadata, the rest as JSON."""

    api_version: str = Field("", alias="apiVersion")
    kind: str = ""
    metadata: ObjectMeta | None = None

    info: ClassVar[ResourceInfo]

    @classmethod
    def resource_info(cls) -> ResourceInfo:
        return cls.info

    def field(self, name: str) -> JsonValue:
        """A top-level field by its JSON name (``"spec"``), as the server sent it."""
        return (self.model_extra or {}).get(name)


_made: dict[tuple[str, str], type[GenericResource]] = {}
_lock = threading.Lock()


def generic_resource(
    api_version: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool = True,
    subresources: tuple[str, ...] = (),
) -> type[GenericResource]:
    """The model class of `kind` in `api_version` (``"route.openshift.io/v1"``), addressed by
    `plural`; the same class for the same kind every time."""
    group, _, version = api_version.rpartition("/")
    with _lock:
        known = _made.get((api_version, kind))
        if known is not None:
            return known
        info = ResourceInfo(
            group=group,
            version=version,
            kind=kind,
            plural=plural,
            singular=kind.lower(),
            list_kind=f"{kind}List",
            namespaced=namespaced,
            subresources=subresources,
            short_names=(),
            categories=(),
            family="",
            model_path=f"{__name__}.{kind}",
            served_by=(),
            storage_in=(),
            deprecated_in=(),
        )
        namespace: dict[str, object] = {
            "__module__": __name__,
            "__annotations__": {"api_version": str, "kind": str},
            "api_version": Field(api_version, alias="apiVersion"),
            "kind": kind,
            "info": info,
        }
        made = type(kind, (GenericResource,), namespace)
        _made[(api_version, kind)] = made
        return made
