"""Mutations of real objects, guided by their CRD schema.

A mutation picks a place in the object (a field that is there, or one the schema declares
that is not) and changes it the way real mistakes and attacks do: a value of another type,
the edges of a number's format and bounds, NaN and Infinity, strings that miss a pattern, an
enum or a length, impossible date-times, a required field removed, a duplicated list item or
key, an empty object or list, null, an unknown field (also one named like an attribute's
Python name), very deep free-form values; or a valid value where there was none, so that
acceptance is tested as much as refusal. The root's ``apiVersion``, ``kind`` and ``metadata``
are left alone (see ``reference``).
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from typing import Any

from reference import Path, _pattern

_QUANTITY_VALUES = ["500m", "2", "1.5", "8Gi", "1e3", 2, "+1", "-2", ".5", "1Ki"]
_BAD_QUANTITIES = ["lots", "1.5.5", "8 GiB", "", "1e", "Gi", 0.5, "2Mb"]
_STRINGS = [
    "",
    "x",
    "valid-name",
    "Bad_Name!",
    "UPPER",
    "-leading",
    "trailing-",
    "a" * 64,
    "a" * 254,
    "with space",
    "line\n",
    "caf\u00e9",
    "\u212a",  # Kelvin sign: (?i)[a-z] matches it in RE2, as in Python
    "\u0662\u0660",
    "example.com/path",
    "a.b.c",
    "Ready",
    "True",
    "Maybe",
]
_DATE_TIMES = [
    "2024-05-01T10:00:00Z",
    "2024-02-29T23:59:59.999+05:30",
    "2024-05-01t10:00:00z",
    "2024-13-45T25:61:00Z",
    "2024-02-30T10:00:00Z",
    "2023-02-29T00:00:00Z",
    "2024-05-01T10:00Z",
    "2024-05-01 10:00:00Z",
    "2024-05-01T10:00:00",
    "2024-05-01T10:00:00+0530",
    "2024-05-01T24:00:00Z",
    "\u0662\u0660\u0662\u0664-05-01T10:00:00Z",
    "2024-05-01T10:00:00Z\n",
    "2024-05-01T10:00:00ZTx",
]
_NAME_POOL = ["a", "abc", "valid-name", "a.b", "example.com/x", "Ready", "A1", "x-1", "q"]


@dataclass
class Site:
    """A place in an object: where, its schema (None: free-form), and whether it is set."""

    path: Path
    schema: dict[str, Any] | None
    present: bool
    free: bool = False


def child_schema(
    schema: dict[str, Any] | None, key: str | int
) -> tuple[dict[str, Any] | None, bool]:
    """The schema of a child, and whether the child is free-form."""
    if schema is None:
        return None, True
    if isinstance(key, int):
        items = schema.get("items")
        return (items, False) if isinstance(items, dict) else (None, True)
    props = schema.get("properties", {})
    if key in props:
        return props[key], False
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra, False
    return None, True


def sites(obj: Any, schema: dict[str, Any]) -> list[Site]:
    """Every place a mutation may touch."""
    out: list[Site] = []
    stack: list[tuple[Any, dict[str, Any] | None, Path, bool]] = [(obj, schema, (), False)]
    while stack:
        value, s, path, free = stack.pop()
        if path:
            out.append(Site(path, s, True, free))
        if isinstance(value, dict):
            embedded = s is not None and (not path or s.get("x-kubernetes-embedded-resource"))
            for key, child in value.items():
                if (not path and key in ("apiVersion", "kind", "metadata")) or (
                    embedded and key == "metadata"
                ):
                    continue
                sub, sub_free = child_schema(s, key)
                stack.append((child, sub, (*path, key), free or sub_free))
            if s is not None and not free:
                for key, prop in s.get("properties", {}).items():
                    if key not in value and not (
                        not path and key in ("apiVersion", "kind", "metadata")
                    ):
                        out.append(Site((*path, key), prop, False))
        elif isinstance(value, list):
            for i, child in enumerate(value):
                sub, sub_free = child_schema(s, i)
                stack.append((child, sub, (*path, i), free or sub_free))
    return out


def get(obj: Any, path: Path) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def put(obj: Any, path: Path, value: Any) -> None:
    parent = get(obj, path[:-1])
    parent[path[-1]] = value


def remove(obj: Any, path: Path) -> None:
    parent = get(obj, path[:-1])
    if isinstance(parent, list):
        del parent[path[-1]]
    else:
        del parent[path[-1]]


# --------------------------------------------------------------------------- values
def valid_value(s: dict[str, Any] | None, rng: random.Random, depth: int = 0) -> Any:
    """A value ``s`` accepts (best effort: None when none is found)."""
    if s is None:
        return rng.choice([{"k": "v"}, [1, "two"], "free", 3])
    if "enum" in s:
        return copy.deepcopy(rng.choice(s["enum"]))
    if s.get("x-kubernetes-int-or-string"):
        pattern = s.get("pattern")
        if pattern and "KMGTPE" in pattern:
            return rng.choice(_QUANTITY_VALUES)
        if pattern:
            return rng.choice([1, *(c for c in ["10%", "1", "25%"] if _pattern(pattern).search(c))])
        return rng.choice([1, "name", 80])
    kind = s.get("type")
    if kind == "string":
        return _valid_string(s, rng)
    if kind == "integer":
        low, high = _int_range(s)
        return rng.randint(low, min(high, low + 20)) if low <= high else None
    if kind == "number":
        low = s.get("minimum", 0)
        return low + 0.5 if s.get("maximum") is None or s["maximum"] > low + 0.5 else low
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "array":
        item = valid_value(s.get("items"), rng, depth + 1) if depth < 6 else None
        count = max(s.get("minItems", 0), 1 if item is not None else 0)
        return [copy.deepcopy(item) for _ in range(min(count, 1))] if item is not None else []
    if s.get("x-kubernetes-embedded-resource"):
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}
    if kind == "object" or "properties" in s:
        props = s.get("properties", {})
        if not props:
            extra = s.get("additionalProperties")
            if isinstance(extra, dict) and depth < 6:
                value = valid_value(extra, rng, depth + 1)
                return {"key": value} if value is not None else {}
            return {}
        out: dict[str, Any] = {}
        wanted = set(s.get("required", ()))
        if depth < 4 and props:
            wanted |= {rng.choice(sorted(props))}
        for name in sorted(wanted):
            if depth >= 7 and name not in s.get("required", ()):
                continue
            value = valid_value(props.get(name), rng, depth + 1)
            if value is None:
                return None
            out[name] = value
        return out
    return "x"


def _valid_string(s: dict[str, Any], rng: random.Random) -> str | None:
    if s.get("format") == "date-time":
        return "2024-05-01T10:00:00Z"
    low, high = s.get("minLength", 0), s.get("maxLength", 10**9)
    pool = list(_NAME_POOL)
    rng.shuffle(pool)
    for candidate in pool:
        if not low <= len(candidate) <= high:
            continue
        if "pattern" in s and not _pattern(s["pattern"]).search(candidate):
            continue
        return candidate
    return None


def _int_range(s: dict[str, Any]) -> tuple[int, int]:
    low, high = (-(2**31), 2**31 - 1) if s.get("format") == "int32" else (-(2**63), 2**63 - 1)
    if "minimum" in s:
        low = max(low, int(s["minimum"]) + (1 if s.get("exclusiveMinimum") else 0))
    if "maximum" in s:
        high = min(high, int(s["maximum"]) - (1 if s.get("exclusiveMaximum") else 0))
    return max(low, -5) if "minimum" not in s else low, high


def edge_values(s: dict[str, Any] | None, rng: random.Random) -> list[Any]:
    """Values at and past the edges of what ``s`` accepts, and values of other types."""
    others: list[Any] = [
        None,
        True,
        0,
        -1,
        1.5,
        3.0,
        float("nan"),
        float("inf"),
        "x",
        [],
        {},
        [1],
        {"a": 1},
    ]
    if s is None:
        return [*others, {"deep": [{"nan": float("nan")}]}, 10**30, 10**400, {"a": {"b": None}}]
    out: list[Any] = []
    if "enum" in s:
        for choice in s["enum"]:
            if isinstance(choice, str):
                out += [choice.lower(), choice.upper(), choice + " ", "Maybe"]
            else:
                out += [choice, float(choice) if isinstance(choice, int) else choice]
    kind = s.get("type")
    if s.get("x-kubernetes-int-or-string"):
        out += [2**63 - 1, 2**63, -(2**63) - 1, 2.5, 4.0, *_BAD_QUANTITIES, *_QUANTITY_VALUES]
    elif kind == "string":
        out += list(_STRINGS)
        if s.get("format") == "date-time":
            out += _DATE_TIMES
        for bound in ("minLength", "maxLength"):
            if bound in s:
                n = s[bound]
                out += ["a" * max(n - 1, 0), "a" * n, "a" * (n + 1)]
        if "pattern" in s:
            out += [c + "\n" for c in _NAME_POOL if _pattern(s["pattern"]).search(c)]
    elif kind == "integer":
        out += [2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63) - 1, "3", 7.0]
        out += [-1, 0, 1]
        for bound in ("minimum", "maximum"):
            if bound in s:
                b = int(s[bound])
                out += [b - 1, b, b + 1]
    elif kind == "number":
        out += [3.4028234e38, 3.5e38, -3.5e38, 1e308, -0.0, 2**63, 2**70, 10**400, "1.5", 0.1]
        for bound in ("minimum", "maximum"):
            if bound in s:
                b = s[bound]
                out += [b - 0.001, b, b + 0.001]
    elif kind == "boolean":
        out += ["true", 1, "false"]
    elif kind == "array":
        out += [[], [None], ["x", "x"], [1, 1], [{}]]
    elif kind == "object" or "properties" in s:
        out += [{}, {"unknown": 1}, {"a": None}]
    return out + rng.sample(others, 4)


def snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _nested(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels - 1):
        value = {"n": value}
    return value


# --------------------------------------------------------------------------- mutations
def mutate(obj: dict[str, Any], schema: dict[str, Any], rng: random.Random) -> str:
    """Change ``obj`` in place once; returns what was done."""
    places = sites(obj, schema)
    present = [p for p in places if p.present]
    absent = [p for p in places if not p.present]
    roll = rng.random()
    if absent and roll < 0.2:
        site = rng.choice(absent)
        value = (
            valid_value(site.schema, rng)
            if rng.random() < 0.7
            else rng.choice(edge_values(site.schema, rng))
        )
        put(obj, site.path, value)
        return f"set {site.path} (absent) to {_short(value)}"
    if not present:
        return "nothing to mutate"
    site = rng.choice(present)
    current = get(obj, site.path)
    if roll < 0.55:
        value = rng.choice(edge_values(site.schema, rng))
        put(obj, site.path, value)
        return f"set {site.path} to {_short(value)}"
    if roll < 0.63 and isinstance(site.path[-1], str):
        remove(obj, site.path)
        return f"removed {site.path}"
    if roll < 0.78 and isinstance(current, list) and current:
        item = copy.deepcopy(rng.choice(current))
        if isinstance(item, dict) and item and rng.random() < 0.5:
            # Same key, other details: what a merge by key would collapse.
            field = rng.choice(sorted(item))
            keys = (site.schema or {}).get("x-kubernetes-list-map-keys", [])
            if field not in keys:
                item[field] = valid_value(
                    child_schema(child_schema(site.schema, 0)[0], field)[0], rng
                )
        current.append(item)
        return f"duplicated an item of {site.path}"
    if roll < 0.9 and isinstance(current, dict):
        names = sorted(current)
        choices = [
            "futureField",
            "x_y",
            *(snake_case(n) for n in names if snake_case(n) != n),
            *((site.schema or {}).get("properties", {}).keys()),
        ]
        name = rng.choice(choices)
        value: Any = rng.choice([1, "two", {"three": [3]}, None, float("nan"), [{"k": 1.5}]])
        if rng.random() < 0.02:
            value = _nested(rng.choice([250, 3000, 9_990, 10_020]))
        if name in current and rng.random() < 0.5:
            name = "extra_" + name
        current[name] = value
        return f"added {name!r} to {site.path}"
    if isinstance(current, dict | list):
        put(obj, site.path, type(current)())
        return f"emptied {site.path}"
    put(obj, site.path, None)
    return f"set {site.path} to null"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
