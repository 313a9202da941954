"""Scalar types shared by every generated model, checked as the API server checks them.

All are strict: ``"2"`` is not an integer and ``2`` is not a string, so what
was read is what is written back (``cpu: 2`` stays ``2``, ``"500m"`` stays
``"500m"``), and a wrong type is an error at the field's JSON path. Where the
API server applies a rule of its own beyond the schema keywords (every integer
fits in 64 bits, ``format: float`` fits in 32, ``date-time`` as kube-openapi
parses it, no NaN or Infinity since JSON has none), the same rule is here.
"""

from __future__ import annotations

import math
import operator
import re
import struct
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, Field, GetCoreSchemaHandler, PlainValidator
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from ._json import INT64_UNIONS, check_parsed

__all__ = [
    "DATE_TIME_PATTERN",
    "INT64_UNIONS",
    "QUANTITY_PATTERN",
    "Boolean",
    "DateTime",
    "EmbeddedResource",
    "Float32",
    "Int32",
    "Int64",
    "IntOrString",
    "Integer",
    "JsonObject",
    "JsonValue",
    "Number",
    "Quantity",
    "is_date_time",
    "json_field",
    "list_map",
    "list_set",
    "object_size",
]

#: resource.Quantity as CRD schemas constrain it: "500m", "8Gi", "1e3", ...
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# Field(strict=True) rather than pydantic.types.StrictInt & co: same validation, and
# pydantic.types (with annotated_types) is not imported just to load a model.
#: An integer without a format: the API server still requires it to fit in 64 bits.
Integer = Annotated[int, Field(strict=True, ge=_INT64_MIN, le=_INT64_MAX)]
Int32 = Annotated[int, Field(strict=True, ge=-(2**31), le=2**31 - 1)]
Int64 = Integer
Boolean = Annotated[bool, Field(strict=True)]


class _Checked:
    """An annotation checked by pydantic-core alone, from a core schema given here.

    Why: a plain validator is a Python call per value, and a Kubernetes object is mostly
    quantities, names and timestamps; read in bulk, those calls cost more than the rest of
    the validation. Patterns and ranges run in pydantic-core's own regular expression engine
    instead, with the same error type and message as before. (An integer beyond int64 where a
    quantity or int-or-string is allowed is reported as ``int64_range`` by the models' entry
    points, which rename the union's error; see ``KubeModel.model_validate``.)
    """

    __slots__ = ("schema",)

    def __init__(self, schema: CoreSchema) -> None:
        self.schema = schema

    def __get_pydantic_core_schema__(
        self, source: object, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return self.schema


def _int64_or_pattern(kind: str, message: str, pattern: str | None = None) -> _Checked:
    return _Checked(
        core_schema.union_schema(
            [
                core_schema.int_schema(strict=True, ge=_INT64_MIN, le=_INT64_MAX),
                core_schema.str_schema(strict=True, pattern=pattern),
            ],
            custom_error_type=kind,
            custom_error_message=message,
        )
    )


def _int64(value: int) -> int:
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    raise PydanticCustomError(
        "int64_range", "Input should be an integer from -2^63 to 2^63-1 (the API server's int64)"
    )


IntOrString = Annotated[
    int | str, _int64_or_pattern("int_or_string", "Input should be an integer or a string")
]
Quantity = Annotated[
    int | str,
    _int64_or_pattern(
        "quantity",
        "Input should be a Kubernetes quantity: an integer, or a string such as "
        "'500m', '2', '1.5', '8Gi' or '1e3'",
        QUANTITY_PATTERN,
    ),
]


# --------------------------------------------------------------------------- date-time
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# kube-openapi's pattern, unchanged but for the zone letter (it lower-cases the text first);
# its "." is any character, as there.
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?([zZ]|[+-][0-9]{2}:[0-9]{2})")
_T = re.compile("[tT]")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_date(text: str) -> bool:
    found = _DATE.fullmatch(text)
    if found is None:
        return False
    year, month, day = (int(part) for part in found.groups())
    if not 1 <= month <= 12:
        return False
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= day <= _DAYS[month - 1] + leap


def is_date_time(text: str) -> bool:
    """Whether the API server accepts ``text`` as ``format: date-time``.

    The rule of kube-openapi's ``strfmt.IsDateTime``: the text up to the first ``T`` is a
    real calendar date (``2024-02-30`` is not), the part up to the next ``T`` is
    ``hh:mm:ss``, optional fraction, then ``Z`` or ``+hh:mm``, with hours to 23 and minutes
    and seconds to 59; ASCII digits only.
    """
    parts = _T.split(text)
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    found = _TIME.fullmatch(parts[1])
    if found is None:
        return False
    hours, minutes, seconds = found.group(1), found.group(2), found.group(3)
    return hours <= "23" and minutes <= "59" and seconds <= "59"


# is_date_time as one regular expression, for pydantic-core: a real calendar date (the 29th of
# February in leap years only), hours to 23, minutes and seconds to 59, an optional fraction
# after any one character but a line break (kube-openapi's "."), a zone, and after a second T
# anything at all (kube-openapi reads up to it).
_DAY = (
    r"(?:[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|[0-9]{4}-(?:0[13-9]|1[0-2])-(?:29|30)"
    r"|[0-9]{4}-(?:0[13578]|1[02])-31"
    r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"
)
_CLOCK = (
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:[^tT\n][0-9]+)?(?:[zZ]|[+-][0-9]{2}:[0-9]{2})"
)
DATE_TIME_PATTERN = rf"^{_DAY}[tT]{_CLOCK}(?:[tT](?s:.*))?$"

#: Timestamps are kept as the exact strings the server sent.
DateTime = Annotated[
    str,
    _Checked(
        core_schema.custom_error_schema(
            core_schema.str_schema(strict=True, pattern=DATE_TIME_PATTERN),
            custom_error_type="date_time",
            custom_error_message="Input should be an RFC 3339 date-time such as '2024-05-01T12:00:00Z' (a "
            "real date, seconds and a zone required)",
        )
    ),
]


# --------------------------------------------------------------------------- numbers
_FLOAT32_PACK = struct.Struct("<f").pack


def _number(value: object) -> int | float:
    if type(value) is int:
        # Beyond int64 the API server decodes an integer as a float64; beyond that, not at all.
        if _INT64_MIN <= value <= _INT64_MAX or _fits_a_float(value):
            return value
        raise PydanticCustomError(
            "finite_number", "Input should be a number within the range of a 64-bit float"
        )
    if type(value) is float:
        if math.isfinite(value):
            return value
        raise PydanticCustomError(
            "finite_number", "Input should be a finite number (JSON has no NaN or Infinity)"
        )
    raise PydanticCustomError("number", "Input should be a number")


def _fits_a_float(value: int) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _float32(value: object) -> int | float:
    number = _number(value)
    try:
        _FLOAT32_PACK(float(number))
    except (OverflowError, struct.error):
        raise PydanticCustomError(
            "float32_range", "Input should fit in a 32-bit float (format: float)"
        ) from None
    return number


#: Numbers stay as given: ``1`` stays an int, ``0.5`` a float.
Number = Annotated[int | float, PlainValidator(_number, json_schema_input_type=int | float)]
#: ``format: float``: within the range of a 32-bit float, as the API server checks.
Float32 = Annotated[int | float, PlainValidator(_float32, json_schema_input_type=int | float)]


def number_in_range(
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    float32: bool = False,
) -> PlainValidator:
    """A number (int or float, kept as given) within bounds; one error at the field."""
    bounds = [
        (ge, operator.ge, "greater than or equal to"),
        (gt, operator.gt, "greater than"),
        (le, operator.le, "less than or equal to"),
        (lt, operator.lt, "less than"),
    ]
    base = _float32 if float32 else _number

    def check(value: object) -> int | float:
        number = base(value)
        for bound, within, words in bounds:
            if bound is not None and not within(number, bound):
                raise PydanticCustomError("number_range", f"Input should be {words} {bound}")
        return number

    return PlainValidator(check, json_schema_input_type=int | float)


def int_or_string_matching(pattern: str) -> PlainValidator:
    """An integer, or a string matching ``pattern``; one error at the field."""
    compiled = re.compile(pattern)

    def check(value: object) -> int | str:
        if type(value) is int:
            return _int64(value)
        if type(value) is str and compiled.search(value):
            return value
        raise PydanticCustomError(
            "int_or_string_pattern",
            "Input should be an integer, or a string matching {pattern}",
            {"pattern": pattern},
        )

    return PlainValidator(check, json_schema_input_type=int | str)


def one_of(*choices: object) -> PlainValidator:
    """Exactly one of ``choices``, of the same type: ``True`` is not ``1``, ``1.0`` is not ``1``."""
    allowed = {(type(c), c) for c in choices}
    listed = ", ".join(repr(c) for c in choices)

    def check(value: object) -> object:
        if (type(value), value) in allowed:
            return value
        raise PydanticCustomError("enum", "Input should be one of {choices}", {"choices": listed})

    return PlainValidator(check)


# --------------------------------------------------------------------------- free-form JSON
def _json_value(value: object) -> Any:
    check_parsed(value)
    return value


def _json_object(value: object) -> dict[str, Any]:
    if type(value) is not dict:
        raise PydanticCustomError("dict_type", "Input should be a valid dictionary")
    check_parsed(value)
    return value


_GROUP_VERSION = re.compile(r"[^/]+(/[^/]+)?")
_KIND = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")


def _embedded_resource(value: object) -> dict[str, Any]:
    # x-kubernetes-embedded-resource: a whole object, whose apiVersion and kind the API
    # server requires (metadata it checks with the ObjectMeta rules, as at the top level).
    obj = _json_object(value)
    problems = []
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not _GROUP_VERSION.fullmatch(api_version):
        problems.append("apiVersion (a string such as 'v1' or 'ray.io/v1')")
    if not isinstance(kind, str) or not _KIND.fullmatch(kind.lower()):
        problems.append("kind (a string such as 'ConfigMap')")
    metadata = obj.get("metadata")
    if "metadata" in obj and not isinstance(metadata, dict):
        problems.append("metadata as an object")
    elif isinstance(metadata, dict):
        # ObjectMeta's string maps: the API server cannot decode other values there.
        for name in ("labels", "annotations"):
            found = metadata.get(name)
            if found is not None and (
                not isinstance(found, dict)
                or not all(isinstance(v, str) or v is None for v in found.values())
            ):
                problems.append(f"metadata.{name} mapping strings to strings")
    if problems:
        raise PydanticCustomError(
            "embedded_resource",
            "Input should be a Kubernetes object with {problems}",
            {"problems": " and ".join(problems)},
        )
    return obj


#: Any JSON value (``x-kubernetes-preserve-unknown-fields`` without a type, ``RawExtension``).
JsonValue = Annotated[Any, PlainValidator(_json_value)]
#: A free-form JSON object, kept as given.
JsonObject = Annotated[dict[str, Any], PlainValidator(_json_object, json_schema_input_type=dict)]
#: A whole Kubernetes object embedded in another (``x-kubernetes-embedded-resource``).
EmbeddedResource = Annotated[
    dict[str, Any], PlainValidator(_embedded_resource, json_schema_input_type=dict)
]


# --------------------------------------------------------------------------- list types
class _Unspecified:
    """A list-map key the item does not set (and that has no default)."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unspecified()


def _scalar_key(value: object) -> object:
    # Compared as the API server compares decoded JSON: by type and value (1 is not "1",
    # True is not 1), objects and lists by their JSON text.
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return (kind, value)
    if isinstance(value, dict | list):
        import json  # here, not at import: every model import loads this module

        return ("json", json.dumps(value, sort_keys=True, separators=(",", ":"), default=_as_json))
    if hasattr(value, "to_dict"):
        return _scalar_key(value.to_dict())
    return (type(value), value)


def _as_json(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _duplicate(index: int, first: int, where: tuple[str | int, ...], shown: str) -> Exception:
    return PydanticCustomError(
        "list_duplicate",
        "Duplicate value: {value} at [{index}] (also at [{first}])",
        {"value": shown, "index": index, "first": first, "where": (index, *where)},
    )


def _unique_items(items: list[Any]) -> list[Any]:
    if len(items) < 2:
        return items
    seen: dict[object, int] = {}
    for index, item in enumerate(items):
        key = _scalar_key(item)
        if key in seen:
            raise _duplicate(index, seen[key], (), _show(item))
        seen[key] = index
    return items


def list_set() -> AfterValidator:
    """``x-kubernetes-list-type: set``: no item twice."""
    return AfterValidator(_unique_items)


_ATTRS: dict[tuple[type, str], str | None] = {}


def _attr_of(cls: type, json_name: str) -> str | None:
    """The attribute of a model class whose JSON name is ``json_name``."""
    found = _ATTRS.get((cls, json_name), _UNSET)
    if found is _UNSET:
        fields: dict[str, Any] = getattr(cls, "model_fields", {})
        found = next(
            (name for name, info in fields.items() if (info.alias or name) == json_name), None
        )
        _ATTRS[(cls, json_name)] = found
    return found  # type: ignore[return-value]


def json_field(item: object, json_name: str, default: object) -> object:
    """The value of a JSON field of a model or dict, ``default`` when it is not set."""
    if type(item) is dict:
        return item.get(json_name, default)
    attr = _attr_of(type(item), json_name)
    if attr is not None and attr in getattr(item, "__pydantic_fields_set__", ()):
        return getattr(item, attr)
    if attr is None:
        extra = getattr(item, "__pydantic_extra__", None) or {}
        return extra.get(json_name, default)
    return default


def list_map(*keys: str, defaults: Mapping[str, object] | None = None) -> AfterValidator:
    """``x-kubernetes-list-type: map``: no two items with the same values of ``keys``.

    An item that leaves a key unset (or null) counts with the key's schema default
    (``defaults``), as the API server prunes nulls and applies defaults before it checks;
    two items without a key and without a default clash too. Every pod's containers, env,
    ports and mounts pass here, so the common case (model items, keys that are declared
    fields, whose types the models already checked) reads the keys with one C call.
    """
    fills = tuple((defaults or {}).get(name) for name in keys)
    where: tuple[str | int, ...] = (keys[0],) if len(keys) == 1 else ()
    getters: dict[type, Any] = {}

    def getter_of(cls: type) -> Any:
        if cls not in getters:
            attrs = [_attr_of(cls, name) for name in keys]
            getters[cls] = None if None in attrs else operator.attrgetter(*attrs)  # type: ignore[arg-type]
        return getters[cls]

    single = len(keys) == 1
    fill = fills[0]

    def fill_in(values: tuple[object, ...]) -> tuple[object, ...]:
        if len(values) == 2:  # the common case: (containerPort, protocol), (port, protocol)
            first, second = values
            return (
                fills[0] if first is None else first,
                fills[1] if second is None else second,
            )
        return tuple([f if v is None else v for v, f in zip(values, fills, strict=True)])

    def generic_key(item: object) -> tuple[object, ...]:
        # A dict item, or a key that is not a declared field: compared as decoded JSON.
        values = [json_field(item, name, None) for name in keys]
        return tuple(
            [_scalar_key(f if v is None else v) for v, f in zip(values, fills, strict=True)]
        )

    def check(items: list[Any]) -> list[Any]:
        if len(items) < 2:
            return items
        seen: dict[object, int] = {}
        cls: type | None = None
        getter: Any = None
        for index, item in enumerate(items):
            if type(item) is not cls:
                cls = type(item)
                getter = None if cls is dict else getter_of(cls)
            key: Any
            if getter is None:
                key = generic_key(item)
            elif single:
                key = getter(item)
                if key is None:
                    key = fill
            else:
                key = getter(item)
                if None in key:
                    key = fill_in(key)
            if key in seen:
                parts = key if getter is None or not single else (key,)
                shown = ", ".join(
                    f"{name}={_show(_plain_value(value))}"
                    for name, value in zip(keys, parts, strict=True)
                )
                raise _duplicate(index, seen[key], where, shown)
            seen[key] = index
        return items

    return AfterValidator(check)


def _plain_value(key: object) -> object:
    """The value of a key part made by ``_scalar_key`` (or the value itself)."""
    if type(key) is tuple and len(key) == 2 and isinstance(key[0], type):
        return key[1]
    return key


def object_size(
    *,
    min_properties: int | None = None,
    max_properties: int | None = None,
    defaulted: tuple[str, ...] = (),
    keeps_unknown: bool = False,
) -> AfterValidator:
    """``minProperties``/``maxProperties`` of an object, counted as the API server counts:
    after it fills in defaults (``defaulted`` names the fields that have one) and after it
    prunes the fields the schema does not declare (unless it keeps them)."""

    def limit(count: int) -> None:
        if min_properties is not None and count < min_properties:
            raise PydanticCustomError(
                "too_few_properties",
                "Input should have at least {limit} field(s) set",
                {"limit": min_properties},
            )
        if max_properties is not None and count > max_properties:
            raise PydanticCustomError(
                "too_many_properties",
                "Input should have at most {limit} field(s) set",
                {"limit": max_properties},
            )

    def check(value: Any) -> Any:
        limit(_property_count(value, defaulted, keeps_unknown))
        return value

    def json_form(cls: type) -> Any:
        # On a model's checked JSON (see _lazy): the same count, from the JSON names.
        from ._lazy import JsonForm

        declared = {info.alias or name for name, info in getattr(cls, "model_fields", {}).items()}

        def check_json(value: dict[str, Any]) -> dict[str, Any]:
            present = {
                key
                for key, item in value.items()
                if item is not None and (keeps_unknown or key in declared)
            }
            limit(len(present | set(defaulted)))
            return value

        return JsonForm(check_json)

    check.__json_form__ = json_form  # type: ignore[attr-defined]
    return AfterValidator(check)


def _property_count(value: Any, defaulted: tuple[str, ...], keeps_unknown: bool) -> int:
    if isinstance(value, Mapping):
        return len(value)
    fields: dict[str, Any] = type(value).model_fields
    fields_set = value.__pydantic_fields_set__
    present = {
        (info.alias or name)
        for name, info in fields.items()
        if name in fields_set and getattr(value, name) is not None
    }
    present.update(defaulted)
    extra = value.__pydantic_extra__ or {}
    if keeps_unknown:
        present.update(key for key, item in extra.items() if item is not None)
    return len(present)


def _show(value: object) -> str:
    """A short rendering of a (possibly huge) value for a message."""
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return repr(text)
    if isinstance(value, bool | int | float) or value is None or value is _UNSET:
        return repr(value)
    return f"<{type(value).__name__}>"
