"""The reference: what the Kubernetes API server does with a custom resource, from its CRD schema.

An independent reading of the schema, written from the API server's code rather than from
the models, so that the two can be compared (``campaign``). It follows, in order:

1. **JSON**: the body must be JSON (no NaN or Infinity), nest at most 10,000 levels
   (``sigs.k8s.io/json``), integers beyond int64 decode as floats;
2. **pruning** (``apiextensions-apiserver/.../schema/pruning``): fields the structural schema
   does not declare are dropped, except under ``x-kubernetes-preserve-unknown-fields`` and the
   ``apiVersion``/``kind``/``metadata`` of the root and of embedded resources;
3. **nulls and defaults** (``.../schema/defaulting``): a ``null`` that is not nullable is
   dropped, or replaced by the default if there is one; then defaults are filled in;
4. **validation** (``kube-openapi/pkg/validation/validate``): type (an integral float within
   2^53 passes as an integer), nullable, enum, required, ``format`` (``int32``/``int64``
   ranges, ``float`` within float32, ``date-time`` as ``strfmt.IsDateTime``), pattern (RE2),
   bounds, lengths in characters, item and property counts, ``allOf``/``anyOf``/``oneOf``/
   ``not``, ``x-kubernetes-int-or-string``; then embedded resources' ``apiVersion``/``kind``
   and the uniqueness of ``x-kubernetes-list-type: set`` items and ``map`` keys.

Not modelled, and so never mutated by the campaign: ``metadata`` (the API server checks it
with the ObjectMeta rules, names and labels) and CEL rules (``x-kubernetes-validations``,
evaluated by the API server only; the models document them).

:meth:`Reference.admit` also records what it dropped (``pruned``) and where it took a float
for an integer (``integral_floats``), so that the campaign can tell the documented
differences from real ones.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

Path = tuple[str | int, ...]
MAX_DEPTH = 10_000
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_FLOAT32_MAX = 3.4028234663852886e38
_META = ("apiVersion", "kind", "metadata")


@dataclass
class Verdict:
    """What the API server would answer."""

    errors: list[tuple[Path, str]] = field(default_factory=list)
    pruned: list[Path] = field(default_factory=list)
    integral_floats: list[Path] = field(default_factory=list)
    stored: Any = None

    @property
    def ok(self) -> bool:
        return not self.errors


class Reference:
    """Admission of one kind's objects against one CRD version's ``openAPIV3Schema`` (and
    its scale subresource's paths, if it has one)."""

    def __init__(self, schema: dict[str, Any], scale: dict[str, str] | None = None) -> None:
        self.schema = schema
        self.scale = dict(scale or {})

    def admit(self, obj: Any) -> Verdict:
        verdict = Verdict()
        problems = _not_json(obj)
        if problems:
            verdict.errors += problems
            return verdict
        value = _as_decoded(copy.deepcopy(obj))
        root = dict(self.schema, **{"x-kubernetes-embedded-resource": True})
        _prune(value, root, (), verdict.pruned)
        _prune_nulls(value, root, (), verdict.pruned)
        _default(value, root)
        _Validator(verdict).validate(value, root, (), root=True)
        verdict.errors += _scale_errors(value, self.scale)
        verdict.stored = value
        return verdict


def _scale_errors(obj: Any, scale: dict[str, str]) -> list[tuple[Path, str]]:
    """``ValidateScaleSpec``/``ValidateScaleStatus``: the replicas paths hold an int64 from 0
    to MaxInt32 (``unstructured.NestedInt64``: a float is an error), the selector a string."""
    errors: list[tuple[Path, str]] = []
    for name, dotted in sorted(scale.items()):
        path = tuple(dotted.lstrip(".").split("."))
        value: Any = obj
        found = True
        for key in path:
            if not isinstance(value, dict):
                errors.append((path, "accessor error: expected an object"))
                found = False
                break
            if key not in value:
                found = False
                break
            value = value[key]
        if not found:
            continue
        if name == "labelSelectorPath":
            if not isinstance(value, str):
                errors.append((path, "accessor error: expected a string"))
        elif type(value) is not int:
            errors.append((path, "accessor error: expected int64"))
        elif not 0 <= value <= _INT32[1]:
            errors.append((path, "should be a non-negative integer up to MaxInt32"))
    return errors


# --------------------------------------------------------------------------- 1. JSON
def _not_json(obj: Any) -> list[tuple[Path, str]]:
    """Every value Go's JSON decoder would refuse (it stops at the first; which one that
    is depends on the text's order, so all are named)."""
    problems: list[tuple[Path, str]] = []
    stack: list[tuple[Any, Path]] = [(obj, ())]
    while stack:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH and isinstance(node, dict | list):
            problems.append((path, "exceeded max depth"))
            continue
        if isinstance(node, float) and not math.isfinite(node):
            problems.append((path, "not JSON: NaN or Infinity"))
        if type(node) is int and not _INT64[0] <= node <= _INT64[1]:
            try:
                float(node)  # decoded as a float64 ...
            except OverflowError:
                problems.append(
                    (path, "cannot be decoded: a number beyond float64")
                )  # ... if it fits
        if isinstance(node, dict):
            for key, child in node.items():
                if not isinstance(key, str):
                    problems.append((path, "not JSON: a key that is not a string"))
                stack.append((child, (*path, key)))
        elif isinstance(node, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(node))
    return problems


def _as_decoded(value: Any) -> Any:
    """What Go's decoder makes of the JSON text: integers beyond int64 become floats."""
    if isinstance(value, dict):
        return {k: _as_decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_decoded(v) for v in value]
    if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
        return float(value)
    return value


# --------------------------------------------------------------------------- 2. pruning
def _prune(
    x: Any, s: dict[str, Any] | None, path: Path, pruned: list[Path], keep: bool = False
) -> None:
    """Drop undeclared fields; ``keep`` (preserve-unknown-fields, and the items of such a
    list) keeps them and prunes only inside declared ones (upstream ``skipPrune``)."""
    keep = keep or bool(s and s.get("x-kubernetes-preserve-unknown-fields"))
    if s is None and keep:
        return
    if isinstance(x, dict):
        props = s.get("properties", {}) if s is not None else {}
        extra = s.get("additionalProperties") if s is not None else None
        embedded = s is not None and s.get("x-kubernetes-embedded-resource")
        for key in list(x):
            if embedded and key in _META:
                continue
            child = props.get(key, extra if isinstance(extra, dict) else None)
            if child is not None:
                _prune(x[key], child, (*path, key), pruned)
            elif not keep:
                pruned.append((*path, key))
                del x[key]
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for i, item in enumerate(x):
            _prune(item, items, (*path, i), pruned, keep)


# --------------------------------------------------------------------------- 3. nulls, defaults
def _field_schema(key: str, s: dict[str, Any] | None) -> dict[str, Any] | None:
    if s is None:
        return None
    props = s.get("properties", {})
    if key in props:
        return props[key]  # type: ignore[no-any-return]
    extra = s.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _prune_nulls(x: Any, s: dict[str, Any] | None, path: Path, pruned: list[Path]) -> None:
    if isinstance(x, dict):
        for key in list(x):
            child = _field_schema(key, s)
            if (
                x[key] is None
                and child is not None
                and not child.get("nullable")
                and "default" not in child
            ):
                pruned.append((*path, key))
                del x[key]
            else:
                _prune_nulls(x[key], child, (*path, key), pruned)
    elif isinstance(x, list):
        items = s.get("items") if s is not None else None
        for i, item in enumerate(x):
            _prune_nulls(item, items, (*path, i), pruned)


def _default(x: Any, s: dict[str, Any] | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = s.get("properties", {})
        for key, prop in props.items():
            if "default" in prop and (
                key not in x or (x[key] is None and not prop.get("nullable"))
            ):
                x[key] = copy.deepcopy(prop["default"])
        extra = s.get("additionalProperties")
        for key in list(x):
            if key in props:
                _default(x[key], props[key])
            elif isinstance(extra, dict):
                if x[key] is None and not extra.get("nullable") and "default" in extra:
                    x[key] = copy.deepcopy(extra["default"])
                _default(x[key], extra)
    elif isinstance(x, list):
        items = s.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(x):
                if item is None and not items.get("nullable") and "default" in items:
                    x[i] = copy.deepcopy(items["default"])
                _default(x[i], items)


# --------------------------------------------------------------------------- 4. validation
def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _integral(value: float) -> bool:
    return math.isfinite(value) and abs(value) <= 2.0**53 and value == math.floor(value)


@cache
def _pattern(pattern: str) -> re.Pattern[str]:
    """A CRD pattern (RE2, unanchored search) as a Python pattern with the same matches.

    Two differences matter for the pinned CRDs: "$" also matches before a final newline
    in Python, and RE2 allows flags such as "(?i)" after the start, applying from there
    (Python only at the very start, or scoped as "(?i:...)").
    """
    translated = re.sub(r"(?<!\\)\$", r"\\Z", pattern)
    flags = re.search(r"\(\?([imsU]+)\)", translated)
    if flags is not None and flags.start() > 0:
        before, after = translated[: flags.start()], translated[flags.end() :]
        if before.count("(") != before.count(")"):
            raise ValueError(f"flags inside a group are not supported: {pattern}")
        translated = f"{before}(?{flags.group(1)}:{after})"
    return re.compile(translated)


_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|[+-][0-9]{2}:[0-9]{2})")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_date_time(text: str) -> bool:
    """kube-openapi's ``strfmt.IsDateTime``: lower-case, split at "t", a real date before
    the first "t", ``hh:mm:ss[.frac](z|±hh:mm)`` after it, hh <= 23, mm and ss <= 59."""
    if len(text.encode()) < 4:
        return False
    parts = "".join(c.lower() if c in "TZ" else c for c in text).split("t")
    if len(parts) < 2:
        return False
    date = _DATE.fullmatch(parts[0])
    if date is None:
        return False
    year, month, day = (int(g) for g in date.groups())
    if not 1 <= month <= 12:
        return False
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= day <= _DAYS[month - 1] + leap:
        return False
    time = _TIME.fullmatch(parts[1])
    return time is not None and time[1] <= "23" and time[2] <= "59" and time[3] <= "59"


_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


class _Validator:
    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    def fail(self, path: Path, message: str) -> None:
        self.verdict.errors.append((path, message))

    def validate(self, x: Any, s: dict[str, Any], path: Path, root: bool = False) -> None:
        # The uniqueness of list-type items is checked apart from the schema's validation
        # (``ValidateListSetsAndMaps``), so also where items are invalid.
        self._value(x, s, path, root)
        self._list_type(x, s, path)

    def _value(self, x: Any, s: dict[str, Any], path: Path, root: bool) -> None:
        if not self._type(x, s, path):
            return
        if x is None:
            if "enum" in s:
                self.fail(path, "null is not one of the enum values")
            return
        if "enum" in s and not any(_enum_equal(x, e) for e in s["enum"]):
            self.fail(path, "not one of the enum values")
        for sub in s.get("allOf", ()):
            self._value(x, sub, path, False)
        if "anyOf" in s and not any(self._passes(x, sub) for sub in s["anyOf"]):
            self.fail(path, "matches none of anyOf")
        if "oneOf" in s and sum(self._passes(x, sub) for sub in s["oneOf"]) != 1:
            self.fail(path, "must match exactly one of oneOf")
        if "not" in s and self._passes(x, s["not"]):
            self.fail(path, "must not match not")
        if isinstance(x, str):
            self._string(x, s, path)
        elif isinstance(x, bool):
            pass
        elif isinstance(x, int | float):
            self._number(x, s, path)
        elif isinstance(x, list):
            self._array(x, s, path)
        elif isinstance(x, dict):
            self._object(x, s, path, root)

    def _passes(self, x: Any, s: dict[str, Any]) -> bool:
        probe = _Validator(Verdict())
        probe._value(x, s, (), False)
        return probe.verdict.ok

    def _type(self, x: Any, s: dict[str, Any], path: Path) -> bool:
        kind = _json_type(x)
        if s.get("x-kubernetes-int-or-string"):
            if kind == "number" and _integral(x):
                self.verdict.integral_floats.append(path)
                return True
            if kind in ("integer", "string", "null"):
                return True  # a null: the anyOf beside it decides
            self.fail(path, "must be an integer or a string")
            return False
        expected = s.get("type")
        if kind == "null":
            if expected and not s.get("nullable"):
                self.fail(path, f"must be of type {expected}, not null")
                return False
            return True
        if expected is None or expected == kind:
            return True
        if expected == "number" and kind == "integer":
            return True
        if expected == "integer" and kind == "number" and _integral(x):
            self.verdict.integral_floats.append(path)
            return True
        self.fail(path, f"must be of type {expected}, not {kind}")
        return False

    def _string(self, x: str, s: dict[str, Any], path: Path) -> None:
        length = len(x)
        if "minLength" in s and length < s["minLength"]:
            self.fail(path, "too short")
        if "maxLength" in s and length > s["maxLength"]:
            self.fail(path, "too long")
        if "pattern" in s and not _pattern(s["pattern"]).search(x):
            self.fail(path, f"does not match {s['pattern']}")
        if s.get("format") in ("date-time", "datetime") and not is_date_time(x):
            self.fail(path, "not a date-time")

    def _number(self, x: float, s: dict[str, Any], path: Path) -> None:
        kind, fmt = s.get("type"), s.get("format")
        if kind == "integer" or (s.get("x-kubernetes-int-or-string") and not isinstance(x, str)):
            low, high = _INT32 if fmt == "int32" else _INT64
            if not low <= x <= high:
                self.fail(path, f"out of the {fmt or 'int64'} range")
        elif kind == "number" and fmt == "float" and abs(x) > _FLOAT32_MAX * (1 + 2**-25):
            self.fail(path, "out of the float32 range")
        if "minimum" in s:
            low = s["minimum"]
            if x < low or (s.get("exclusiveMinimum") and x == low):
                self.fail(path, f"below the minimum {low}")
        if "maximum" in s:
            high = s["maximum"]
            if x > high or (s.get("exclusiveMaximum") and x == high):
                self.fail(path, f"above the maximum {high}")

    def _array(self, x: list[Any], s: dict[str, Any], path: Path) -> None:
        if "minItems" in s and len(x) < s["minItems"]:
            self.fail(path, "too few items")
        if "maxItems" in s and len(x) > s["maxItems"]:
            self.fail(path, "too many items")
        items = s.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(x):
                self.validate(item, items, (*path, i))

    def _object(self, x: dict[str, Any], s: dict[str, Any], path: Path, root: bool) -> None:
        if "minProperties" in s and len(x) < s["minProperties"]:
            self.fail(path, "too few properties")
        if "maxProperties" in s and len(x) > s["maxProperties"]:
            self.fail(path, "too many properties")
        props = s.get("properties", {})
        for name in s.get("required", ()):
            if name not in x:
                self.fail((*path, name), "required")
        extra = s.get("additionalProperties")
        for key, value in x.items():
            if (root or s.get("x-kubernetes-embedded-resource")) and key == "metadata":
                continue  # ObjectMeta rules: not modelled (see the module doc)
            if key in props:
                self.validate(value, props[key], (*path, key))
            elif isinstance(extra, dict):
                self.validate(value, extra, (*path, key))
        if s.get("x-kubernetes-embedded-resource") and not root:
            self._embedded(x, path)

    def _embedded(self, x: dict[str, Any], path: Path) -> None:
        version, kind = x.get("apiVersion"), x.get("kind")
        parts = version.split("/") if isinstance(version, str) else []
        if not isinstance(version, str) or not version or len(parts) > 2 or "" in parts:
            self.fail((*path, "apiVersion"), "a group/version is required")
        if not isinstance(kind, str) or not kind:
            self.fail((*path, "kind"), "a kind is required")
        elif len(kind) > 63 or not _DNS1035.fullmatch(kind.lower()):
            self.fail((*path, "kind"), "may have mixed case, but should be a DNS-1035 label")
        if "metadata" in x and not isinstance(x["metadata"], dict):
            self.fail((*path, "metadata"), "must be an object")

    def _list_type(self, x: Any, s: dict[str, Any], path: Path) -> None:
        if not isinstance(x, list) or len(x) < 2:
            return
        kind = s.get("x-kubernetes-list-type")
        if kind == "set":
            for i in _repeats([_key(v) for v in x]):
                self.fail((*path, i), "duplicate value")
        elif kind == "map":
            # Items that are not objects are named as such and have no key to compare.
            names = s.get("x-kubernetes-list-map-keys", [])
            keys: list[Any] = []
            for i, v in enumerate(x):
                if isinstance(v, dict):
                    keys.append(tuple(_key(v[n]) if n in v else ("unset",) for n in names))
                else:
                    self.fail((*path, i), "must be an object for an array of list-type map")
                    keys.append(("not an object", i))
            for i in _repeats(keys):
                self.fail((*path, i), "duplicate key")


def _repeats(keys: list[Any]) -> Iterator[int]:
    """The index of each value's second appearance (as the API server reports them)."""
    counts: dict[Any, int] = {}
    for i, key in enumerate(keys):
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 2:
            yield i


def _key(value: Any) -> Any:
    if isinstance(value, dict | list):
        return ("json", json.dumps(value, sort_keys=True))
    return (type(value).__name__, value)


def _enum_equal(value: Any, choice: Any) -> bool:
    if isinstance(choice, str) or isinstance(value, str):
        return value == choice and type(value) is type(choice)
    if isinstance(choice, bool) or isinstance(value, bool):
        return value is choice
    return bool(value == choice)
