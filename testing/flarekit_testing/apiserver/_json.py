"""JSON as kube-apiserver reads it, and copies of JSON-shaped data.

`loads` decodes a request body the way the API server's decoder (Go's encoding/json through
sigs.k8s.io/json) does: no NaN or Infinity, at most 10,000 levels of nesting, integers beyond
int64 read as float64 and numbers beyond float64 refused; each refusal is a `JsonRefused`
worded as the server words it.

Stored objects are parsed JSON; a copy that only knows those types is several times faster
than `copy.deepcopy`, which dominates start-up and every read otherwise.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeVar, cast

T = TypeVar("T")

#: The deepest nesting the API server decodes (sigs.k8s.io/json's limit).
MAX_DEPTH = 10_000
_INT64 = (-(2**63), 2**63 - 1)
#: A whole string (so that brackets inside it are skipped), or a bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class JsonRefused(ValueError):
    """A body the API server's JSON decoder refuses; `unmarshal` is True when Go's decoder
    read it but could not hold a value (the server then says so in another sentence)."""

    def __init__(self, message: str, unmarshal: bool = False) -> None:
        super().__init__(message)
        self.unmarshal = unmarshal


class TooDeep(RecursionError):
    """A body nested deeper than this process can follow, but within the API server's limit."""


def _constant(name: str) -> Any:
    if name.startswith("-"):  # -Infinity: a number that goes wrong after its sign
        raise JsonRefused(f"invalid character '{name[1]}' in numeric literal")
    raise JsonRefused(f"invalid character '{name[0]}' looking for beginning of value")


def _integer(text: str) -> int | float:
    value = int(text)
    if _INT64[0] <= value <= _INT64[1]:
        return value
    return _float(text)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonRefused(
            f"json: cannot unmarshal number {text} into Go value of type float64", True
        )
    return value


def too_deep_at(data: bytes, limit: int = MAX_DEPTH) -> str | None:
    """The bracket that opens level `limit` + 1 of JSON text, if its nesting goes that deep
    (strings skipped), else None."""
    depth = 0
    for match in _TOKENS.finditer(data):
        char = match.group()
        if char in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return char.decode()
        elif char in (b"]", b"}"):
            depth -= 1
    return None


def loads(data: bytes) -> Any:
    """`data` decoded as the API server decodes a body; JsonRefused where it refuses it,
    TooDeep where it would take it but this process cannot follow it."""
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH:  # cheap: only then can it be deeper
        bracket = too_deep_at(data)
        if bracket is not None:
            raise JsonRefused(f"invalid character '{bracket}' exceeded max depth")
    try:
        return json.loads(data, parse_constant=_constant, parse_int=_integer, parse_float=_float)
    except RecursionError:
        bracket = too_deep_at(data)
        if bracket is not None:
            raise JsonRefused(f"invalid character '{bracket}' exceeded max depth") from None
        raise TooDeep("nested deeper than Python's recursion limit") from None


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
