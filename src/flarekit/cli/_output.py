"""Printing results as a table (for people) or as YAML / JSON (for scripts).

Why one place: every command returns a facade object (a status, a listing, details) whose
``str()`` is already a readable table; ``--output yaml|json`` needs the same object as plain
data. :func:`to_data` turns dataclasses, enums, dates, models and lists of them into JSON
types, so every command supports all three formats the same way.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TextIO

__all__ = ["FORMATS", "Format", "emit", "to_data"]

Format = Literal["table", "yaml", "json"]
FORMATS: tuple[Format, ...] = ("table", "yaml", "json")


def to_data(value: Any) -> Any:
    """`value` as JSON types: dataclasses as dicts of their public fields, enums as their
    values, dates as ISO 8601, typed models through their ``to_dict()``."""
    if isinstance(value, enum.Enum):  # before str: StrEnum values are strings too
        return to_data(value.value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_data(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_") and f.repr
        }
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_data(value.to_dict())
    if isinstance(value, Mapping):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, Sequence | set | frozenset):
        return [to_data(v) for v in value]
    return str(value)


def emit(value: Any, fmt: Format, out: TextIO, *, table: str | None = None) -> None:
    """Print `value` in `fmt`; `table` replaces ``str(value)`` for the table format."""
    if fmt == "json":
        out.write(json.dumps(to_data(value), indent=2, sort_keys=False) + "\n")
    elif fmt == "yaml":
        import yaml

        out.write(yaml.safe_dump(to_data(value), sort_keys=False, default_flow_style=False))
    else:
        text = str(value) if table is None else table
        out.write(text.rstrip("\n") + "\n")
    out.flush()
