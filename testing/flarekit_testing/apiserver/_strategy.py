"""What one kind adds to the generic write path: the apiserver's per-kind "strategy".

kube-apiserver stores every resource through the same registry code and lets each kind plug
in a strategy: defaults and server-set fields on create (`PrepareForCreate`), what an update
may not change (`PrepareForUpdate`, `ValidateUpdate`), validation, whether `generation`
moves, and how `kubectl get` prints it (the table convertor). Custom resources share one
strategy (the schema does the work); built-in kinds each have their own. The write, read and
table code ask the strategy instead of testing for kinds by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._names import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    path_segment_errors,
)

JSON = dict[str, Any]

#: metadata.name rules by name (apimachinery's ValidateNameFunc implementations).
NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "subdomain": dns1123_subdomain_errors,
    "label": dns1123_label_errors,
    "label1035": dns1035_label_errors,
    "segment": lambda name: path_segment_errors(name, prefix=False),
}


@dataclass(frozen=True)
class Column:
    """One column of `kubectl get` (a TableColumnDefinition); `priority` 1 shows with -o wide."""

    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0

    def to_json(self) -> JSON:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


class Strategy:
    """The behaviour of custom resources; built-in kinds override what differs.

    `generation`: whether metadata.generation is set and bumped on spec changes.
    `names`: the metadata.name rule (a key of NAME_RULES).
    """

    generation = True
    names = "subdomain"
    #: built-in kinds are decoded with the URL's group/version/kind as defaults
    typed = False
    #: selectable field labels -> the path each reads; None: metadata.name/namespace only
    fields: ClassVar[Mapping[str, str] | None] = None

    def to_stored(self, obj: JSON) -> JSON:
        """The object as stored, from the version it was written in (a shallow copy)."""
        return dict(obj)

    def from_stored(self, obj: JSON, api_version: str) -> JSON:
        """The stored object as seen in `api_version` (a shallow copy)."""
        out = dict(obj)
        out["apiVersion"] = api_version
        return out

    def selectable(self) -> Mapping[str, str] | None:
        if self.fields is None and not self.typed:
            return None
        meta = {"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace"}
        return {**meta, **(self.fields or {})}

    def default(self, obj: JSON) -> None:
        """Defaults decoding into the kind's Go type sets (its `SetDefaults_*` functions): the
        writer owns them, as it owns what it sent."""

    def zero(self) -> JSON:
        """The kind's empty Go object as JSON (fields without `omitempty` present, empty or
        null): what a create is compared with to find the fields its writer owns."""
        return {}

    def prepare_create(self, obj: JSON) -> None:
        """Server-set fields of a new object (the strategy's `PrepareForCreate`, allocations
        and the default admission plugins): no manager owns them."""

    def prepare_update(self, new: JSON, old: JSON) -> None:
        """Fields an update through the main endpoint may not touch are copied from `old`."""

    def validate(self, obj: JSON) -> list[Cause]:
        return []

    def validate_update(self, new: JSON, old: JSON) -> list[Cause]:
        return []

    def decode(self, obj: JSON) -> str | None:
        """Why the body could not be decoded into the kind's Go type (400), or None."""
        return None

    def columns(self) -> list[Column]:
        """Table columns after NAME (AGE is added by the table code where the kind has it)."""
        return []

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        return []

    def name_errors(self, name: str) -> list[str]:
        return NAME_RULES[self.names](name)


CUSTOM = Strategy()
