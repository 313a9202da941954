"""Scalar types shared by every generated model.

All are strict: ``"2"`` is not an integer and ``2`` is not a string, so what
was read is what is written back (``cpu: 2`` stays ``2``, ``"500m"`` stays
``"500m"``), and a wrong type is an error at the field's JSON path.
"""

from __future__ import annotations

import operator
import re
from typing import Annotated

from pydantic import Field, PlainValidator
from pydantic_core import PydanticCustomError

__all__ = [
    "QUANTITY_PATTERN",
    "Boolean",
    "DateTime",
    "Int32",
    "Int64",
    "IntOrString",
    "Integer",
    "Number",
    "Quantity",
]

#: resource.Quantity as CRD schemas constrain it: "500m", "8Gi", "1e3", ...
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

# Field(strict=True) rather than pydantic.types.StrictInt & co: same validation, and
# pydantic.types (with annotated_types) is not imported just to load a model.
Integer = Annotated[int, Field(strict=True)]
Int32 = Annotated[int, Field(strict=True, ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[int, Field(strict=True, ge=-(2**63), le=2**63 - 1)]
_String = Annotated[str, Field(strict=True)]
Boolean = Annotated[bool, Field(strict=True)]
_QUANTITY = re.compile(QUANTITY_PATTERN)


def _int_or_string(value: object) -> int | str:
    # One check instead of a union, so an error's location is the field itself
    # and its message says what is allowed.
    if type(value) is int or type(value) is str:
        return value
    raise PydanticCustomError("int_or_string", "Input should be an integer or a string")


def _quantity(value: object) -> int | str:
    if type(value) is int:
        return value
    if type(value) is str and _QUANTITY.fullmatch(value):
        return value
    raise PydanticCustomError(
        "quantity",
        "Input should be a Kubernetes quantity: an integer, or a string such as "
        "'500m', '2', '1.5', '8Gi' or '1e3'",
    )


IntOrString = Annotated[int | str, PlainValidator(_int_or_string, json_schema_input_type=int | str)]
Quantity = Annotated[int | str, PlainValidator(_quantity, json_schema_input_type=int | str)]
#: The date-time forms the API server accepts (RFC 3339 and the ISO 8601 variants it parses).
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?"
)


def _date_time(value: object) -> str:
    if type(value) is str and _DATE_TIME.fullmatch(value):
        return value
    raise PydanticCustomError(
        "date_time", "Input should be an RFC 3339 timestamp such as '2024-05-01T12:00:00Z'"
    )


def _number(value: object) -> int | float:
    if type(value) is int or type(value) is float:
        return value
    raise PydanticCustomError("number", "Input should be a number")


def number_in_range(
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
) -> PlainValidator:
    """A number (int or float, kept as given) within bounds; one error at the field."""
    bounds = [
        (ge, operator.ge, "greater than or equal to"),
        (gt, operator.gt, "greater than"),
        (le, operator.le, "less than or equal to"),
        (lt, operator.lt, "less than"),
    ]

    def check(value: object) -> int | float:
        number = _number(value)
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
            return value
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


#: Numbers stay as given: ``1`` stays an int, ``0.5`` a float.
Number = Annotated[int | float, PlainValidator(_number, json_schema_input_type=int | float)]
#: Timestamps are kept as the exact strings the server sent.
DateTime = Annotated[str, PlainValidator(_date_time, json_schema_input_type=str)]
