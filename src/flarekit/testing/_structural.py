"""Admission of custom resources against a CRD version's ``openAPIV3Schema``.

``FakeCluster`` runs every write through :func:`admit`, which does what the Kubernetes API
server (``apiextensions-apiserver``) does to a custom resource before storing it, in the
same order:

1. **prune** fields the structural schema does not know (never ``apiVersion``, ``kind`` or
   ``metadata`` at the root or inside ``x-kubernetes-embedded-resource`` objects; nothing
   under ``x-kubernetes-preserve-unknown-fields`` except where properties are declared),
   drop non-nullable ``null`` values that have no default, and drop unknown ``metadata``
   fields the way decoding into ``ObjectMeta`` does;
2. **default**: apply ``default`` where a field is absent (or a non-nullable ``null``),
   deep-copied, inside objects, array items and ``additionalProperties`` values; defaults
   of fields whose parent object is absent are not applied;
3. **validate**: ``metadata.name`` / ``generateName`` / labels / annotations, then the
   OpenAPI value validations (type, nullable, required, enum, pattern, format, numeric
   bounds, lengths, item and property counts, uniqueItems, allOf/anyOf/oneOf/not,
   ``x-kubernetes-int-or-string``), then embedded resources (apiVersion/kind/metadata),
   then the uniqueness of ``x-kubernetes-list-type: set`` items and ``map`` keys.

Violations come back as :class:`FieldCause` entries worded like the API server's
``Status.details.causes`` (``field.Error`` types such as ``FieldValueRequired`` and the
kube-openapi messages such as ``spec.replicas in body must be of type integer: "string"``).
Behaviour follows upstream even where upstream is lax: ``format: int32`` / ``int64`` bounds
are not enforced on numbers (kubernetes/kubernetes#136091), unknown formats are ignored, and
``maxLength`` violations read "Too long: value is too long".

Not implemented: ``x-kubernetes-validations`` (CEL rules) are **not evaluated**; validation
ratcheting on update; ``isbn``/``creditcard`` formats (accepted as is). Patterns use Python's
``re`` after translating the RE2 constructs the pinned CRDs use (scoped ``(?i)``, ``$``).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from flarekit.testing._json import copy_json
from flarekit.testing._names import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    label_value_errors,
    path_segment_errors,
    qualified_name_errors,
)

__all__ = ["AdmissionResult", "FieldCause", "admit", "compiled", "invalid_message"]

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
TYPE_INVALID = "FieldValueTypeInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
DUPLICATE = "FieldValueDuplicate"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"


@dataclass(frozen=True)
class FieldCause:
    """One entry of ``Status.details.causes``: what is wrong, where, in the API's words."""

    reason: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass
class AdmissionResult:
    """The object as the API server would store it, and what is wrong with it."""

    obj: dict[str, Any]
    causes: list[FieldCause] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.causes


def invalid_message(kind: str, group: str, name: str, causes: Sequence[FieldCause]) -> str:
    """The ``Status.message`` of a 422 Invalid error, e.g.
    ``RayCluster.ray.io "demo" is invalid: spec.x: Required value``."""
    qualified = f"{kind}.{group}" if group else kind
    head = f"{qualified} {go_quote(name)} is invalid"
    seen: list[str] = []
    for cause in causes:
        text = str(cause)
        if text not in seen:
            seen.append(text)
    if not seen:
        return head
    body = seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"
    return f"{head}: {body}"


# --- bad values and messages as field.Error.ErrorBody() renders them ------------------------


def _go_float(value: float) -> str:
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text


def _bad_value(value: Any) -> str:
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _number(value: float | int) -> str:
    return _go_float(value) if isinstance(value, float) else str(value)


# --- field paths -----------------------------------------------------------------------------


class _Path:
    """A field path built one step at a time; rendered only when an error needs it.

    ``openapi`` renders additionalProperties keys as ``.key`` (kube-openapi errors), ``field``
    as ``[key]`` (``field.Path.Key``, used by list-type and metadata errors).
    """

    __slots__ = ("key", "kind", "parent")

    def __init__(self, parent: _Path | None, kind: str, key: str | int) -> None:
        self.parent, self.kind, self.key = parent, kind, key

    def _render(self, map_keys_as_index: bool) -> str:
        parts: list[str] = []
        node: _Path | None = self
        while node is not None and node.kind != "root":
            if node.kind == "index" or (node.kind == "key" and map_keys_as_index):
                parts.append(f"[{node.key}]")
            else:
                parts.append(f".{node.key}")
            node = node.parent
        return "".join(reversed(parts)).lstrip(".")

    @property
    def openapi(self) -> str:
        return self._render(False)

    @property
    def field(self) -> str:
        return self._render(True)

    def child(self, name: str) -> _Path:
        return _Path(self, "child", name)

    def key_(self, name: str) -> _Path:
        return _Path(self, "key", name)

    def index(self, i: int) -> _Path:
        return _Path(self, "index", i)


_ROOT = _Path(None, "root", "")


# --- compiled schema -------------------------------------------------------------------------

_STRING_FORMATS = frozenset(
    (
        *("bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac"),
        *("uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn"),
        *("hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime"),
        *("k8sshortname", "k8slongname"),
    )
)


class Schema:
    """One schema node, with everything admission needs precomputed."""

    __slots__ = (
        "additional",
        "all_of",
        "any_of",
        "default",
        "embedded",
        "enum",
        "excl_max",
        "excl_min",
        "format",
        "has_default",
        "items",
        "list_map_keys",
        "list_type",
        "map_type",
        "max_items",
        "max_length",
        "max_props",
        "maximum",
        "min_items",
        "min_length",
        "min_props",
        "minimum",
        "multiple_of",
        "not_",
        "nullable",
        "one_of",
        "patch_merge_key",
        "patch_strategy",
        "pattern",
        "pattern_re",
        "preserve",
        "properties",
        "required",
        "types",
        "unique_items",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        typ = raw.get("type")
        self.types: tuple[str, ...] = (typ,) if isinstance(typ, str) and typ else ()
        if raw.get("x-kubernetes-int-or-string"):
            self.types = ("integer", "string")
        self.nullable = bool(raw.get("nullable"))
        self.format = _effective_format(raw.get("format"), self.types)
        self.preserve = bool(raw.get("x-kubernetes-preserve-unknown-fields"))
        self.embedded = bool(raw.get("x-kubernetes-embedded-resource"))
        self.properties = {k: Schema(v) for k, v in (raw.get("properties") or {}).items()}
        additional = raw.get("additionalProperties")
        self.additional: Schema | bool | None = (
            Schema(additional) if isinstance(additional, Mapping) else additional
        )
        items = raw.get("items")
        self.items = Schema(items) if isinstance(items, Mapping) else None
        self.required: tuple[str, ...] = tuple(raw.get("required") or ())
        self.enum: list[Any] | None = raw.get("enum")
        self.has_default = "default" in raw
        self.default = raw.get("default")
        self.pattern: str | None = raw.get("pattern")
        self.pattern_re = _compile_pattern(self.pattern) if self.pattern is not None else None
        self.maximum = raw.get("maximum")
        self.minimum = raw.get("minimum")
        self.excl_max = bool(raw.get("exclusiveMaximum"))
        self.excl_min = bool(raw.get("exclusiveMinimum"))
        self.multiple_of = raw.get("multipleOf")
        self.max_length = raw.get("maxLength")
        self.min_length = raw.get("minLength")
        self.max_items = raw.get("maxItems")
        self.min_items = raw.get("minItems")
        self.unique_items = bool(raw.get("uniqueItems"))
        self.max_props = raw.get("maxProperties")
        self.min_props = raw.get("minProperties")
        self.list_type = raw.get("x-kubernetes-list-type")
        self.map_type = raw.get("x-kubernetes-map-type")
        self.patch_strategy = str(raw.get("x-kubernetes-patch-strategy") or "")
        self.patch_merge_key = raw.get("x-kubernetes-patch-merge-key")
        self.list_map_keys: tuple[str, ...] = tuple(raw.get("x-kubernetes-list-map-keys") or ())
        self.all_of = [Schema(s) for s in raw.get("allOf") or ()]
        self.any_of = [Schema(s) for s in raw.get("anyOf") or ()]
        self.one_of = [Schema(s) for s in raw.get("oneOf") or ()]
        self.not_ = Schema(raw["not"]) if isinstance(raw.get("not"), Mapping) else None

    def child_schema(self, key: str) -> Schema | None:
        """The schema that governs member ``key`` (property, else additionalProperties)."""
        prop = self.properties.get(key)
        if prop is not None:
            return prop
        return self.additional if isinstance(self.additional, Schema) else None


def _effective_format(fmt: Any, types: tuple[str, ...]) -> str:
    """The format upstream keeps after stripping unsupported ones (else "")."""
    if not isinstance(fmt, str) or not fmt:
        return ""
    kind = types[0] if len(types) == 1 else ""
    if kind in ("", "string"):
        return fmt if fmt.replace("-", "") in _STRING_FORMATS else ""
    if kind == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if kind == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")


def _translate_re2(pattern: str) -> str:
    """Rewrite RE2 syntax Python's ``re`` reads differently.

    Inline flags like ``^(?i)abc`` apply to the rest of the group in RE2 but must lead the
    whole pattern in Python, so they become a scoped group ``^(?i:abc)``; ``$`` and ``\\z``
    mean end of text (Python's ``$`` also matches before a final newline).
    """
    out: list[str] = []
    pending = [0]  # scoped groups to close at the end of each open group
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            out.append("\\Z" if nxt == "z" and not in_class else c + nxt)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if i + 1 < n and pattern[i + 1] == "]":
                out.append("]")
                i += 1
        elif c == "(":
            flags = _INLINE_FLAGS.match(pattern, i)
            if flags and i > 0:
                out.append(f"(?{flags.group(1).replace('U', '')}:")
                pending[-1] += 1
                i = flags.end()
                continue
            pending.append(0)
            out.append(c)
        elif c == ")":
            out.append(")" * (pending.pop() if len(pending) > 1 else 0))
            out.append(c)
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(c)
        i += 1
    out.append(")" * pending[0])
    return "".join(out)


def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(_translate_re2(pattern))
    except re.error:
        return None  # RE2-only syntax (e.g. \p{L}); upstream would accept the CRD


_CACHE: OrderedDict[int, tuple[Mapping[str, Any], Schema]] = OrderedDict()
_CACHE_SIZE = 1024  # every served version of every default release, with room


def compiled(schema: Mapping[str, Any]) -> Schema:
    """Compile ``schema`` once; the cache keeps the dict alive so its id stays unique."""
    key = id(schema)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is schema:
        _CACHE.move_to_end(key)
        return hit[1]
    built = Schema(schema)
    _CACHE[key] = (schema, built)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return built


# --- pruning ---------------------------------------------------------------------------------

_META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))
_OBJECT_META_FIELDS = frozenset(
    (
        *("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion"),
        *("generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"),
        *("labels", "annotations", "ownerReferences", "finalizers", "managedFields"),
    )
)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


class _Pruner:
    def __init__(self) -> None:
        self.unknown: list[str] = []

    def prune(self, x: Any, s: Schema | None, path: str, embedded: bool = False) -> None:
        if s is not None and s.preserve:
            self._skip_prune(x, s, path, embedded or s.embedded)
            return
        if isinstance(x, dict):
            if s is None:
                for k in list(x):
                    self.unknown.append(_join(path, k))
                    del x[k]
                return
            embedded = embedded or s.embedded
            for k in list(x):
                v = x[k]
                if embedded and k in _META_FIELDS:
                    if k == "metadata":
                        self._coerce_meta(v, _join(path, k), root=not path)
                    continue
                sub = s.child_schema(k)
                if sub is not None:
                    self._null_or_prune(x, k, v, sub, _join(path, k))
                elif s.additional is True:
                    self.prune(v, None, _join(path, k))
                else:
                    self.unknown.append(_join(path, k))
                    del x[k]
        elif isinstance(x, list):
            items = s.items if s is not None else None
            for i, v in enumerate(x):
                self.prune(v, items, f"{path}[{i}]")

    def _null_or_prune(self, x: dict[str, Any], k: str, v: Any, s: Schema, path: str) -> None:
        if v is None:
            if not s.nullable and not s.has_default:
                del x[k]  # upstream PruneNonNullableNullsWithoutDefaults
            return
        self.prune(v, s, path)

    def _skip_prune(self, x: Any, s: Schema, path: str, embedded: bool) -> None:
        if isinstance(x, dict):
            for k in list(x):
                if embedded and k in _META_FIELDS:
                    if k == "metadata":
                        self._coerce_meta(x[k], _join(path, k), root=not path)
                    continue
                sub = s.child_schema(k)
                if sub is not None:
                    self._null_or_prune(x, k, x[k], sub, _join(path, k))
                elif s.additional is True:
                    self.prune(x[k], None, _join(path, k))
        elif isinstance(x, list) and s.items is not None:
            for i, v in enumerate(x):
                self._skip_prune(v, s.items, f"{path}[{i}]", s.items.embedded)

    def _coerce_meta(self, meta: Any, path: str, root: bool) -> None:
        """Drop what decoding into ``ObjectMeta`` drops: unknown keys and nulls.

        Embedded objects also lose an empty ``creationTimestamp``, as upstream's coercion
        removes the zero timestamp the round trip would add.
        """
        if not isinstance(meta, dict):
            return
        for k in list(meta):
            if k not in _OBJECT_META_FIELDS:
                self.unknown.append(_join(path, k))
                del meta[k]
            elif meta[k] is None or (not root and k == "creationTimestamp" and not meta[k]):
                del meta[k]


# --- defaulting ------------------------------------------------------------------------------


def _copy_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


def _default(x: Any, s: Schema | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        for k, prop in s.properties.items():
            if prop.has_default and (k not in x or (x[k] is None and not prop.nullable)):
                x[k] = _copy_json(prop.default)
        additional = s.additional if isinstance(s.additional, Schema) else None
        for k, v in x.items():
            member = s.properties.get(k)
            if member is not None:
                _default(v, member)
            elif additional is not None:
                if v is None and not additional.nullable and additional.has_default:
                    x[k] = v = _copy_json(additional.default)
                _default(v, additional)
    elif isinstance(x, list):
        items = s.items
        if items is None:
            return
        for i, v in enumerate(x):
            if v is None and not items.nullable and items.has_default:
                x[i] = v = _copy_json(items.default)
            _default(v, items)


# --- validation ------------------------------------------------------------------------------

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_JSON_INT = 2**53


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "integer" if _INT64_MIN <= value <= _INT64_MAX else "number"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(p, q) for p, q in zip(a, b, strict=True))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return bool(a == b)


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _scalar_key(value: Any) -> tuple[str, Any]:
    """A hashable key that keeps true/1 and 1/1.0 apart, as Go's map[interface{}] does."""
    if isinstance(value, (dict, list)):
        return ("c", _canonical(value))
    return (type(value).__name__, value)


class _Validator:
    def __init__(self) -> None:
        self.causes: list[FieldCause] = []
        self.embedded_causes: list[FieldCause] = []
        self.list_causes: list[FieldCause] = []

    # helpers building causes the way kubeOpenAPIResultToFieldErrors converts them
    def invalid(self, path: _Path, value: Any, detail: str) -> None:
        self.causes.append(
            FieldCause(INVALID, path.openapi, f"Invalid value: {_bad_value(value)}: {detail}")
        )

    def type_invalid(self, path: _Path, expected: str, got: str) -> None:
        p = path.openapi
        self.causes.append(
            FieldCause(
                TYPE_INVALID,
                p,
                f"Invalid value: {go_quote(got)}: {p} in body must be of type {expected}: "
                f"{go_quote(got)}",
            )
        )

    def validate(self, x: Any, s: Schema, path: _Path) -> None:
        if x is None:
            if s.types and not s.nullable:
                self.type_invalid(path, ",".join(s.types), "null")
            elif s.enum is not None and not any(e is None for e in s.enum):
                self._enum_failure(path, x, s.enum)
            return
        kind = _kind(x)
        if s.types and not self._type_ok(x, kind, s, path):
            if s.any_of or s.one_of:
                self._combinators(x, s, path)
            return
        if s.all_of or s.any_of or s.one_of or s.not_ is not None:
            self._combinators(x, s, path)
        if kind == "string":
            self._string(x, s, path)
        elif kind in ("integer", "number"):
            self._number(x, s, path)
        elif kind == "array":
            self._array(x, s, path)
        if s.enum is not None and not any(_json_equal(x, e) for e in s.enum):
            self._enum_failure(path, x, s.enum)
        if kind == "object":
            self._object(x, s, path)
        if s.embedded and isinstance(x, dict):
            self._embedded(x, path)

    def _type_ok(self, x: Any, kind: str, s: Schema, path: _Path) -> bool:
        types = s.types
        if kind in types:
            return True
        if (
            kind == "number"
            and "integer" in types
            and isinstance(x, float)
            and x.is_integer()
            and abs(x) <= _MAX_JSON_INT
        ):
            return True
        if kind == "integer" and "number" in types:
            return True
        numeric = "integer" in types or "number" in types
        if s.format and not numeric and kind in ("string", "array"):
            return True  # upstream's type validator lets these through unchecked
        if s.format and kind not in ("string", "array"):
            data_format = {"integer": "int64", "number": "float64"}.get(kind, "")
            if data_format != s.format:
                self.type_invalid(path, s.format, data_format)
                return False
        self.type_invalid(path, ",".join(types), kind)
        return False

    def _enum_failure(self, path: _Path, x: Any, enum: list[Any]) -> None:
        allowed = ", ".join(go_quote(e if isinstance(e, str) else _canonical(e)) for e in enum)
        self.causes.append(
            FieldCause(
                NOT_SUPPORTED,
                path.openapi,
                f"Unsupported value: {_bad_value(x)}: supported values: {allowed}",
            )
        )

    def _string(self, x: str, s: Schema, path: _Path) -> None:
        if s.max_length is not None and len(x) > s.max_length:
            self.causes.append(FieldCause(TOO_LONG, path.openapi, "Too long: value is too long"))
        if s.min_length is not None and len(x) < s.min_length:
            p = path.openapi
            self.invalid(path, x, f"{p} in body should be at least {s.min_length} chars long")
        if s.pattern_re is not None and not s.pattern_re.search(x):
            self.invalid(path, x, f"{path.openapi} in body should match '{s.pattern}'")
        if s.format and not _format_ok(s.format, x):
            p = path.openapi
            self.causes.append(
                FieldCause(
                    TYPE_INVALID,
                    p,
                    f"Invalid value: {go_quote(x)}: {p} in body must be of type {s.format}: "
                    f"{go_quote(x)}",
                )
            )

    def _number(self, x: float | int, s: Schema, path: _Path) -> None:
        is_int = isinstance(x, int) and _INT64_MIN <= x <= _INT64_MAX
        if not is_int and isinstance(x, int):
            x = _to_float(x)
        if s.multiple_of is not None and s.multiple_of > 0:
            factor = int(s.multiple_of) if is_int else s.multiple_of
            if is_int and factor:
                bad = x % factor != 0
            else:
                quotient = x / factor if factor >= 1 else (1 / factor) * x
                bad = not (float(quotient).is_integer() and abs(quotient) <= _MAX_JSON_INT)
            if bad:
                p = path.openapi
                self.invalid(path, x, f"{p} in body should be a multiple of {_number(factor)}")
        if s.maximum is not None:
            limit = int(s.maximum) if is_int else float(s.maximum)
            if x > limit or (s.excl_max and x >= limit):
                rel = "less than" if s.excl_max else "less than or equal to"
                self.invalid(path, x, f"{path.openapi} in body should be {rel} {_number(limit)}")
        if s.minimum is not None:
            limit = int(s.minimum) if is_int else float(s.minimum)
            if x < limit or (s.excl_min and x <= limit):
                rel = "greater than" if s.excl_min else "greater than or equal to"
                self.invalid(path, x, f"{path.openapi} in body should be {rel} {_number(limit)}")

    def _array(self, x: list[Any], s: Schema, path: _Path) -> None:
        if s.items is not None:
            for i, v in enumerate(x):
                self.validate(v, s.items, path.index(i))
        if s.min_items is not None and len(x) < s.min_items:
            p = path.openapi
            self.invalid(path, len(x), f"{p} in body should have at least {s.min_items} items")
        if s.max_items is not None and len(x) > s.max_items:
            self.causes.append(
                FieldCause(TOO_MANY, path.openapi, f"Too many: {len(x)}: has too many items")
            )
        if s.unique_items and len({_canonical(v) for v in x}) != len(x):
            self.invalid(path, "", f"{path.openapi} in body shouldn't contain duplicates")
        if s.list_type == "set":
            self._list_set(x, path)
        elif s.list_type == "map":
            self._list_map(x, s, path)

    def _object(self, x: dict[str, Any], s: Schema, path: _Path) -> None:
        count = len(x)
        if s.min_props is not None and count < s.min_props:
            p = path.openapi
            self.invalid(path, count, f"{p} in body should have at least {s.min_props} properties")
            return
        if s.max_props is not None and count > s.max_props:
            self.causes.append(
                FieldCause(TOO_MANY, path.openapi, f"Too many: {count}: has too many items")
            )
            return
        additional = s.additional
        for k, v in x.items():
            prop = s.properties.get(k)
            if prop is not None:
                self.validate(v, prop, path.child(k))
            elif isinstance(additional, Schema):
                self.validate(v, additional, path.key_(k))
            elif additional is False and not ((s.embedded or path is _ROOT) and k in _META_FIELDS):
                p = _join(path.openapi, k)
                self.invalid(path, k, f"{p} in body is a forbidden property")
        for k in s.required:
            if k not in x:
                self.causes.append(FieldCause(REQUIRED, path.child(k).openapi, "Required value"))

    def _combinators(self, x: Any, s: Schema, path: _Path) -> None:
        p = path.openapi

        def run(branch: Schema) -> list[FieldCause]:
            sub = _Validator()
            sub.validate(x, branch, path)
            return sub.causes

        def composite(message: str) -> None:
            self.causes.append(FieldCause(INVALID, "<nil>", f'Invalid value: "": {message}'))

        if s.all_of:
            failures = [c for branch in s.all_of for c in run(branch)]
            if failures:
                composite(f"{p} must validate all the schemas (allOf)")
                self.causes.extend(failures)
        if s.any_of:
            results = [run(branch) for branch in s.any_of]
            if all(results):
                composite(f"{p} must validate at least one schema (anyOf)")
                self.causes.extend(results[0])
        if s.one_of:
            results = [run(branch) for branch in s.one_of]
            valid = sum(1 for r in results if not r)
            if valid != 1:
                found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                composite(f"{p} must validate one and only one schema (oneOf). {found}")
                if valid == 0:
                    self.causes.extend(results[0])
        if s.not_ is not None and not run(s.not_):
            composite(f"{p} must not validate the schema (not)")

    # x-kubernetes-list-type (upstream listtype.ValidateListSetsAndMaps)
    def _list_set(self, x: list[Any], path: _Path) -> None:
        for i in _duplicate_indices([_scalar_key(v) for v in x]):
            self.list_causes.append(
                FieldCause(DUPLICATE, path.index(i).field, f"Duplicate value: {_bad_value(x[i])}")
            )

    def _list_map(self, x: list[Any], s: Schema, path: _Path) -> None:
        for i, v in enumerate(x):
            if v is not None and not isinstance(v, dict):
                self.list_causes.append(
                    FieldCause(
                        INVALID,
                        path.index(i).field,
                        f"Invalid value: {_bad_value(v)}: must be an object for an array of "
                        "list-type map",
                    )
                )
                return
        keys = [
            {k: v[k] for k in s.list_map_keys if k in v} if isinstance(v, dict) else {} for v in x
        ]
        for i in _duplicate_indices([_canonical(k) for k in keys]):
            self.list_causes.append(
                FieldCause(
                    DUPLICATE, path.index(i).field, f"Duplicate value: {_bad_value(keys[i])}"
                )
            )

    # x-kubernetes-embedded-resource (upstream objectmeta.Validate)
    def _embedded(self, x: dict[str, Any], path: _Path) -> None:
        out = self.embedded_causes
        for name in ("apiVersion", "kind"):
            if name not in x:
                out.append(FieldCause(REQUIRED, path.child(name).field, "Required value"))
        api_version = x.get("apiVersion")
        if "apiVersion" in x:
            where = path.child("apiVersion").field
            if not isinstance(api_version, str):
                out.append(
                    FieldCause(
                        INVALID,
                        where,
                        f"Invalid value: {_bad_value(api_version)}: must be a string",
                    )
                )
            elif not api_version:
                out.append(FieldCause(REQUIRED, where, "Required value"))
            elif api_version.count("/") > 1:
                out.append(
                    FieldCause(
                        INVALID,
                        where,
                        f"Invalid value: {go_quote(api_version)}: unexpected GroupVersion "
                        f"string: {api_version}",
                    )
                )
        kind = x.get("kind")
        if "kind" in x:
            where = path.child("kind").field
            if not isinstance(kind, str):
                out.append(
                    FieldCause(
                        INVALID, where, f"Invalid value: {_bad_value(kind)}: must be a string"
                    )
                )
            elif not kind:
                out.append(FieldCause(REQUIRED, where, "Required value"))
            else:
                errs = dns1035_label_errors(kind.lower())
                if errs:
                    out.append(
                        FieldCause(
                            INVALID,
                            where,
                            f"Invalid value: {go_quote(kind)}: may have mixed case, but should "
                            "otherwise match: " + ",".join(errs),
                        )
                    )
        meta = x.get("metadata")
        if isinstance(meta, dict):
            out.extend(_object_meta_causes(meta, path.child("metadata").field, embedded=True))


def _to_float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _duplicate_indices(keys: list[Any]) -> list[int]:
    """Indices of the second occurrence of each repeated key (as upstream reports them)."""
    seen: dict[Any, int] = {}
    found: list[int] = []
    for i, key in enumerate(keys):
        times = seen.get(key, 0)
        if times == 1:
            found.append(i)
        seen[key] = times + 1
    return found


# --- metadata --------------------------------------------------------------------------------


def _mask_trailing_dash(name: str) -> str:
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def _object_meta_causes(
    meta: Mapping[str, Any],
    where: str,
    embedded: bool,
    names: Callable[[str], list[str]] = dns1123_subdomain_errors,
) -> list[FieldCause]:
    """Upstream ``ValidateObjectMeta`` checks on names, labels and annotation keys.

    Root objects use DNS-1123 subdomain names (``NameIsDNSSubdomain``); embedded resources
    only need a valid path segment (``ValidatePathSegmentName``).
    """
    causes: list[FieldCause] = []

    def name_errors(value: str, prefix: bool) -> list[str]:
        if embedded:
            return path_segment_errors(value, prefix)
        return names(_mask_trailing_dash(value) if prefix else value)

    generate_name = meta.get("generateName")
    if isinstance(generate_name, str) and generate_name:
        for msg in name_errors(generate_name, True):
            causes.append(
                FieldCause(
                    INVALID,
                    f"{where}.generateName",
                    f"Invalid value: {go_quote(generate_name)}: {msg}",
                )
            )
    name = meta.get("name")
    if not name and not embedded:
        causes.append(
            FieldCause(
                REQUIRED, f"{where}.name", "Required value: name or generateName is required"
            )
        )
    elif isinstance(name, str) and name:
        for msg in name_errors(name, False):
            causes.append(
                FieldCause(INVALID, f"{where}.name", f"Invalid value: {go_quote(name)}: {msg}")
            )
    namespace = meta.get("namespace")
    if embedded and isinstance(namespace, str) and namespace:
        for msg in dns1123_label_errors(namespace):
            causes.append(
                FieldCause(
                    INVALID, f"{where}.namespace", f"Invalid value: {go_quote(namespace)}: {msg}"
                )
            )
    labels = meta.get("labels")
    if isinstance(labels, Mapping):
        for key, value in labels.items():
            for msg in qualified_name_errors(str(key)):
                causes.append(
                    FieldCause(
                        INVALID, f"{where}.labels", f"Invalid value: {go_quote(str(key))}: {msg}"
                    )
                )
            for msg in label_value_errors(str(value)):
                causes.append(
                    FieldCause(
                        INVALID, f"{where}.labels", f"Invalid value: {go_quote(str(value))}: {msg}"
                    )
                )
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping):
        total = 0
        for key, value in annotations.items():
            total += len(str(key)) + len(str(value))
            for msg in qualified_name_errors(str(key).lower()):
                causes.append(
                    FieldCause(
                        INVALID,
                        f"{where}.annotations",
                        f"Invalid value: {go_quote(str(key))}: {msg}",
                    )
                )
        if total > 256 * 1024:
            causes.append(
                FieldCause(
                    TOO_LONG, f"{where}.annotations", "Too long: may not be more than 262144 bytes"
                )
            )
    return causes


# --- formats (the kube-openapi registry the API server keeps) --------------------------------

_DATE_TIME_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?"
)
_DURATION_RE = re.compile(r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")
_SCALA_DURATION_RE = re.compile(
    r"\d+\s*(?:ns|nanos?|nanoseconds?|us|µs|micros?|microseconds?|ms|millis?|milliseconds?|"
    r"s|secs?|seconds?|m|mins?|minutes?|h|hours?|d|days?|w|wk|weeks?)"
)
_UUID_RES = {
    "uuid": re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"),
    "uuid3": re.compile(r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}"),
    "uuid4": re.compile(
        r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}"
    ),
    "uuid5": re.compile(
        r"(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}"
    ),
}
_SIMPLE_RES = {
    "bsonobjectid": re.compile(r"[0-9a-fA-F]{24}"),
    "hexcolor": re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"),
    "rgbcolor": re.compile(
        r"rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
        r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)"
    ),
    "ssn": re.compile(r"\d{3}[- ]?\d{2}[- ]?\d{4}"),
    "mac": re.compile(r"([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}|([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}"),
    "email": re.compile(r"[^@\s<>]+@[^@\s<>]+"),
    "uri": re.compile(r"(/|[A-Za-z][A-Za-z0-9+.-]*:)\S*"),
    "hostname": re.compile(
        r"(?=.{1,255}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
    ),
    "k8sshortname": re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"),
    "k8slongname": re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"),
}


def _valid_date_time(value: str) -> bool:
    m = _DATE_TIME_RE.fullmatch(value)
    if m is None:
        return False
    try:
        year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
        datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    return True


def _format_ok(fmt: str, value: str) -> bool:
    name = fmt.replace("-", "")
    if name == "datetime":
        return _valid_date_time(value)
    if name == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            return False
        return len(value) == 10
    if name == "duration":
        return bool(_DURATION_RE.fullmatch(value) or _SCALA_DURATION_RE.fullmatch(value))
    if name == "byte":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return False
        return len(value) % 4 == 0
    if name in ("ipv4", "ipv6", "cidr"):
        try:
            if name == "cidr":
                ipaddress.ip_network(value, strict=False)
                return "/" in value
            address = ipaddress.ip_address(value)
        except ValueError:
            return False
        return address.version == (4 if name == "ipv4" else 6)
    if name in _UUID_RES:
        return bool(_UUID_RES[name].fullmatch(value))
    if name == "k8sshortname" and len(value) > 63:
        return False
    if name == "k8slongname" and len(value) > 253:
        return False
    regex = _SIMPLE_RES.get(name)
    return regex is None or bool(regex.fullmatch(value))


# --- entry point -----------------------------------------------------------------------------


def admit(
    obj: Mapping[str, Any],
    schema: Mapping[str, Any],
    names: Callable[[str], list[str]] = dns1123_subdomain_errors,
) -> AdmissionResult:
    """Prune, default and validate ``obj`` against a CRD version's ``openAPIV3Schema``.

    ``obj`` is never modified; ``AdmissionResult.obj`` is the object as the API server would
    persist it (if ``causes`` is empty) and ``unknown_fields`` lists what pruning dropped,
    sorted, e.g. ``["spec.foo"]`` for the ``unknown field "spec.foo"`` warning.
    """
    root = compiled(schema)
    result = copy_json(dict(obj))
    pruner = _Pruner()
    pruner.prune(result, root, "", embedded=True)

    metadata = result.get("metadata")
    result_meta = metadata if isinstance(metadata, dict) else None
    if result_meta is not None:
        result.pop("metadata")
    _default(result, root)
    if result_meta is not None:
        result["metadata"] = result_meta

    validator = _Validator()
    causes = _object_meta_causes(result_meta or {}, "metadata", embedded=False, names=names)
    validator.validate(result, root, _ROOT)
    causes.extend(validator.causes)
    causes.extend(validator.embedded_causes)
    causes.extend(validator.list_causes)
    return AdmissionResult(result, causes, sorted(pruner.unknown))
