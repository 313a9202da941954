"""Copies of JSON-shaped data (dicts, lists, strings, numbers, booleans, None).

Stored objects are parsed JSON; a copy that only knows those types is several times faster
than `copy.deepcopy`, which dominates start-up and every read otherwise.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

T = TypeVar("T")


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) not in (dict, list) else _copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) not in (dict, list) else _copy(v) for v in value]
    return value


def copy_json(value: T) -> T:
    """A deep copy of JSON data (other objects are shared, as immutable leaves)."""
    return cast(T, _copy(value))
