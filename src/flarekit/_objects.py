"""Reading the parts every Kubernetes object has, on any model: metadata and conditions.

Why: `KubeResource` is the base of every generated kind, but each kind declares its own
`metadata` and `status`, so code that handles "any job" or "any queued object" needs one
place that reads them. Conditions are looked up one way everywhere: by type, and "true" only
when their status is ``"True"``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from flarekit_models import KubeResource
    from flarekit_models.meta.v1 import ObjectMeta

__all__ = ["ConditionLike", "find_condition", "is_true", "labels_of", "metadata_of", "name_of"]


def metadata_of(obj: KubeResource) -> ObjectMeta | None:
    """The object's metadata (every kind has it; None on an object built without one)."""
    meta: ObjectMeta | None = getattr(obj, "metadata", None)
    return meta


def name_of(obj: KubeResource) -> str:
    meta = metadata_of(obj)
    return (meta.name if meta is not None else None) or ""


def labels_of(obj: KubeResource) -> dict[str, str]:
    meta = metadata_of(obj)
    return dict(meta.labels or {}) if meta is not None else {}


class ConditionLike(Protocol):
    """What every kind's condition model has (Kubernetes' `metav1.Condition` and the
    operators' own condition types)."""

    @property
    def type(self) -> str: ...

    @property
    def status(self) -> str: ...


C = TypeVar("C", bound=ConditionLike)


def find_condition(conditions: Iterable[C] | None, type_: str) -> C | None:
    """The condition of type `type_`, whatever its status (None if there is none)."""
    return next((c for c in conditions or () if c.type == type_), None)


def is_true(conditions: Iterable[ConditionLike] | None, type_: str) -> bool:
    """Whether condition `type_` is there with status ``"True"``."""
    found = find_condition(conditions, type_)
    return found is not None and found.status == "True"
