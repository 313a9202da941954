"""Scalar types shared by every generated model.

All are strict: ``"2"`` is not an integer and ``2`` is not a string, so what
was read is what is written back (``cpu: 2`` stays ``2``, ``"500m"`` stays
``"500m"``), and a wrong type is an error at the field's JSON path.
"""

from __future__ import annotations

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
_Float = Annotated[float, Field(strict=True)]
_String = Annotated[str, Field(strict=True)]
Number = Integer | _Float
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
#: RFC 3339 timestamps are kept as the exact strings the server sent.
DateTime = _String
