"""Printing results the way kubectl does: a table for people, the API objects for scripts.

Why: ``-o`` means ``--output`` in every command, and its formats mean what they mean in
kubectl. ``table`` (the default) and ``wide`` (more columns) are for people; ``yaml`` and
``json`` print the Kubernetes objects themselves as the server stored them (one object, or a
``List`` of them), so the output can be fed back to ``kubectl apply``; ``name`` prints
``kind.group/name`` per object. Commands without an API object to show (``version``) print
their data through :func:`emit`; :func:`to_data` turns dataclasses, enums, dates and models
into JSON types for that.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TextIO

from flarekit._json import JsonValue
from flarekit._objects import name_of
from flarekit._yaml import dump_yaml

if TYPE_CHECKING:
    from flarekit_models import KubeResource

__all__ = [
    "DATA_FORMATS",
    "DELETE_FORMATS",
    "GET_FORMATS",
    "LIST_FORMATS",
    "Format",
    "dump",
    "emit",
    "emit_objects",
    "object_name",
    "to_data",
]

Format = Literal["table", "wide", "name", "yaml", "json"]
#: Commands that show listings: every format.
LIST_FORMATS: tuple[Format, ...] = ("table", "wide", "name", "yaml", "json")
#: Commands that show one object.
GET_FORMATS: tuple[Format, ...] = ("table", "name", "yaml", "json")
#: Commands that delete: what was deleted, as a sentence or as names.
DELETE_FORMATS: tuple[Format, ...] = ("table", "name")
#: Commands whose result is not an API object (``version``).
DATA_FORMATS: tuple[Format, ...] = ("table", "yaml", "json")


def to_data(value: object) -> JsonValue:
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


def dump(data: JsonValue, fmt: Format) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, sort_keys=False) + "\n"

    return dump_yaml(data, sort_keys=False)


def emit(value: object, fmt: Format, out: TextIO, *, table: str | None = None) -> None:
    """Print `value` in `fmt` (table, yaml or json); `table` replaces ``str(value)``."""
    if fmt in ("json", "yaml"):
        out.write(dump(to_data(value), fmt))
    else:
        text = str(value) if table is None else table
        out.write(text.rstrip("\n") + "\n")
    out.flush()


def object_name(obj: KubeResource) -> str:
    """kubectl's ``-o name`` form: ``raycluster.ray.io/demo`` (``pod/x`` for the core group)."""
    info = type(obj).resource_info()
    kind = info.kind.lower() + (f".{info.group}" if info.group else "")
    return f"{kind}/{name_of(obj)}"


def emit_objects(
    objects: Sequence[KubeResource],
    fmt: Format,
    out: TextIO,
    *,
    table: str,
    wide: str | None = None,
    single: bool = False,
) -> None:
    """Print API objects: `table` (or `wide`) as text, the objects themselves as YAML or JSON
    (`single`: the one object; else a ``v1`` ``List``), or their names one per line."""
    if fmt in ("yaml", "json"):
        items = [obj.to_dict() for obj in objects]
        if single and len(items) == 1:
            out.write(dump(items[0], fmt))
        else:
            out.write(dump({"apiVersion": "v1", "kind": "List", "items": items}, fmt))
    elif fmt == "name":
        out.write("".join(object_name(obj) + "\n" for obj in objects))
    else:
        text = wide if fmt == "wide" and wide is not None else table
        out.write(text.rstrip("\n") + "\n")
    out.flush()
