"""The type of a JSON value, for the few places where the facade holds free-form JSON.

Why: a Ray runtime environment, a pod template given as Kubernetes JSON or a value read from a
field the schema leaves open really is arbitrary JSON. Saying so (rather than ``Any``) keeps
mypy checking what the code does with it: a value must be narrowed (``isinstance``) before it
is used as a string, a list or an object. The read-only ``Sequence``/``Mapping`` make a
``list[str]`` or a ``dict[str, int]`` a valid value too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["JsonObject", "JsonValue"]

#: Any JSON value: null, a boolean, a number, a string, an array or an object.
JsonValue: TypeAlias = (
    "str | int | float | bool | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
)
#: A JSON object, as the facade builds and reads one.
JsonObject: TypeAlias = "dict[str, JsonValue]"
