"""Validation of custom resources against their structural schema, worded as kube-apiserver.

The OpenAPI value validations (type, nullable, required, enum, pattern, format, numeric
bounds, lengths, item and property counts, uniqueItems, allOf/anyOf/oneOf/not,
x-kubernetes-int-or-string), embedded resources, the uniqueness of list-type set items and
map keys, and ObjectMeta's name, label and annotation rules. Causes are the `Status` causes
kube-openapi's errors become (`spec.replicas in body must be of type integer: "string"`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._formats import format_ok
from flarekit_testing.apiserver._json import json_equal
from flarekit_testing.apiserver._names import (
    dns1035_label_errors,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    label_value_errors,
    path_segment_errors,
    qualified_name_errors,
)
from flarekit_testing.apiserver._schema import META_FIELDS, Schema, join


def _cause(reason: str, field: str, message: str) -> Cause:
    return Cause(reason, message, field)


REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
TYPE_INVALID = "FieldValueTypeInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
DUPLICATE = "FieldValueDuplicate"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"


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


# --- validation ------------------------------------------------------------------------------

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_JSON_INT = 2**53
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_FLOAT32_MAX = 3.4028234663852886e38


def _in_format_range(x: float | int, fmt: str) -> bool:
    """Whether a number fits the range of its schema's int32 or float format."""
    if fmt == "int32":
        return _INT32_MIN <= x <= _INT32_MAX
    if fmt == "float":
        return abs(x) <= _FLOAT32_MAX
    return True


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


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _scalar_key(value: Any) -> tuple[str, Any]:
    """A hashable key that keeps true/1 and 1/1.0 apart, as Go's map[interface{}] does."""
    if isinstance(value, (dict, list)):
        return ("c", _canonical(value))
    return (type(value).__name__, value)


class _Validator:
    def __init__(self) -> None:
        self.causes: list[Cause] = []
        self.embedded_causes: list[Cause] = []
        self.list_causes: list[Cause] = []

    # helpers building causes the way kubeOpenAPIResultToFieldErrors converts them
    def invalid(self, path: _Path, value: Any, detail: str) -> None:
        self.causes.append(
            _cause(INVALID, path.openapi, f"Invalid value: {_bad_value(value)}: {detail}")
        )

    def type_invalid(self, path: _Path, expected: str, got: str) -> None:
        p = path.openapi
        self.causes.append(
            _cause(
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
        if s.enum is not None and not any(json_equal(x, e) for e in s.enum):
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
            _cause(
                NOT_SUPPORTED,
                path.openapi,
                f"Unsupported value: {_bad_value(x)}: supported values: {allowed}",
            )
        )

    def _string(self, x: str, s: Schema, path: _Path) -> None:
        if s.max_length is not None and len(x) > s.max_length:
            self.causes.append(_cause(TOO_LONG, path.openapi, "Too long: value is too long"))
        if s.min_length is not None and len(x) < s.min_length:
            p = path.openapi
            self.invalid(path, x, f"{p} in body should be at least {s.min_length} chars long")
        if s.pattern_re is not None and not s.pattern_re.search(x):
            self.invalid(path, x, f"{path.openapi} in body should match '{s.pattern}'")
        if s.format and not format_ok(s.format, x):
            p = path.openapi
            self.causes.append(
                _cause(
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
        if not _in_format_range(x, s.format):
            # kube-openapi checks a number against its format's range, in an error that
            # names no field (the API server prints "<nil>") but the place in its message.
            kind = "integer" if s.format == "int32" else "number"
            self.causes.append(
                _cause(
                    INVALID,
                    "<nil>",
                    f'Invalid value: "": Checked value must be of type {kind} with format '
                    f"{s.format} in {path.openapi}",
                )
            )
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
                _cause(TOO_MANY, path.openapi, f"Too many: {len(x)}: has too many items")
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
                _cause(TOO_MANY, path.openapi, f"Too many: {count}: has too many items")
            )
            return
        additional = s.additional
        for k, v in x.items():
            prop = s.properties.get(k)
            if prop is not None:
                self.validate(v, prop, path.child(k))
            elif isinstance(additional, Schema):
                self.validate(v, additional, path.key_(k))
            elif additional is False and not ((s.embedded or path is _ROOT) and k in META_FIELDS):
                p = join(path.openapi, k)
                self.invalid(path, k, f"{p} in body is a forbidden property")
        for k in s.required:
            if k not in x:
                self.causes.append(_cause(REQUIRED, path.child(k).openapi, "Required value"))

    def _combinators(self, x: Any, s: Schema, path: _Path) -> None:
        # The path is rendered only for a message: most values pass, and rendering it was a
        # good part of validating an object.
        def run(branch: Schema) -> list[Cause]:
            sub = _Validator()
            sub.validate(x, branch, path)
            return sub.causes

        def composite(message: str) -> None:
            # kube-openapi quotes the place in these messages, and names no field.
            self.causes.append(_cause(INVALID, "<nil>", f'Invalid value: "": {message}'))

        if s.all_of:
            failures = [c for branch in s.all_of for c in run(branch)]
            if failures:
                composite(f'"{path.openapi}" must validate all the schemas (allOf)')
                self.causes.extend(failures)
        if s.any_of:
            results = [run(branch) for branch in s.any_of]
            if all(results):
                composite(f'"{path.openapi}" must validate at least one schema (anyOf)')
                self.causes.extend(results[0])
        if s.one_of:
            results = [run(branch) for branch in s.one_of]
            valid = sum(1 for r in results if not r)
            if valid != 1:
                found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                composite(
                    f'"{path.openapi}" must validate one and only one schema (oneOf). {found}'
                )
                if valid == 0:
                    self.causes.extend(results[0])
        if s.not_ is not None and not run(s.not_):
            composite(f'"{path.openapi}" must not validate the schema (not)')

    # x-kubernetes-list-type (upstream listtype.ValidateListSetsAndMaps)
    def _list_set(self, x: list[Any], path: _Path) -> None:
        for i in _duplicate_indices([_scalar_key(v) for v in x]):
            self.list_causes.append(
                _cause(DUPLICATE, path.index(i).field, f"Duplicate value: {_bad_value(x[i])}")
            )

    def _list_map(self, x: list[Any], s: Schema, path: _Path) -> None:
        for i, v in enumerate(x):
            if v is not None and not isinstance(v, dict):
                self.list_causes.append(
                    _cause(
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
                _cause(DUPLICATE, path.index(i).field, f"Duplicate value: {_bad_value(keys[i])}")
            )

    # x-kubernetes-embedded-resource (upstream objectmeta.Validate)
    def _embedded(self, x: dict[str, Any], path: _Path) -> None:
        out = self.embedded_causes
        for name in ("apiVersion", "kind"):
            if name not in x:
                out.append(_cause(REQUIRED, path.child(name).field, "Required value"))
        api_version = x.get("apiVersion")
        if "apiVersion" in x:
            where = path.child("apiVersion").field
            if not isinstance(api_version, str):
                out.append(
                    _cause(
                        INVALID,
                        where,
                        f"Invalid value: {_bad_value(api_version)}: must be a string",
                    )
                )
            elif not api_version:
                out.append(_cause(REQUIRED, where, "Required value"))
            elif api_version.count("/") > 1:
                out.append(
                    _cause(
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
                    _cause(INVALID, where, f"Invalid value: {_bad_value(kind)}: must be a string")
                )
            elif not kind:
                out.append(_cause(REQUIRED, where, "Required value"))
            else:
                errs = dns1035_label_errors(kind.lower())
                if errs:
                    out.append(
                        _cause(
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
) -> list[Cause]:
    """Upstream ``ValidateObjectMeta`` checks on names, labels and annotation keys.

    Root objects use DNS-1123 subdomain names (``NameIsDNSSubdomain``); embedded resources
    only need a valid path segment (``ValidatePathSegmentName``).
    """
    causes: list[Cause] = []

    def name_errors(value: str, prefix: bool) -> list[str]:
        if embedded:
            return path_segment_errors(value, prefix)
        return names(_mask_trailing_dash(value) if prefix else value)

    generate_name = meta.get("generateName")
    if isinstance(generate_name, str) and generate_name:
        for msg in name_errors(generate_name, True):
            causes.append(
                _cause(
                    INVALID,
                    f"{where}.generateName",
                    f"Invalid value: {go_quote(generate_name)}: {msg}",
                )
            )
    name = meta.get("name")
    if not name and not embedded:
        causes.append(
            _cause(REQUIRED, f"{where}.name", "Required value: name or generateName is required")
        )
    elif isinstance(name, str) and name:
        for msg in name_errors(name, False):
            causes.append(
                _cause(INVALID, f"{where}.name", f"Invalid value: {go_quote(name)}: {msg}")
            )
    namespace = meta.get("namespace")
    if embedded and isinstance(namespace, str) and namespace:
        for msg in dns1123_label_errors(namespace):
            causes.append(
                _cause(
                    INVALID, f"{where}.namespace", f"Invalid value: {go_quote(namespace)}: {msg}"
                )
            )
    labels = meta.get("labels")
    if isinstance(labels, Mapping):
        for key, value in labels.items():
            for msg in qualified_name_errors(str(key)):
                causes.append(
                    _cause(
                        INVALID, f"{where}.labels", f"Invalid value: {go_quote(str(key))}: {msg}"
                    )
                )
            for msg in label_value_errors(str(value)):
                causes.append(
                    _cause(
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
                    _cause(
                        INVALID,
                        f"{where}.annotations",
                        f"Invalid value: {go_quote(str(key))}: {msg}",
                    )
                )
        if total > 256 * 1024:
            causes.append(
                _cause(
                    TOO_LONG, f"{where}.annotations", "Too long: may not be more than 262144 bytes"
                )
            )
    return causes
