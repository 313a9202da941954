"""Scalar types shared by every generated model.

All are strict: ``"2"`` is not an integer and ``2`` is not a string, so what
was read is what is written back (``cpu: 2`` stays ``2``, ``"500m"`` stays
``"500m"``), and a wrong type is an error at the field's JSON path.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

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
IntOrString = Integer | _String
Quantity = Integer | Annotated[str, Field(strict=True, pattern=QUANTITY_PATTERN)]
#: RFC 3339 timestamps are kept as the exact strings the server sent.
DateTime = _String
