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


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: booleans are not numbers, 1 equals 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return bool(a == b)
