"""Table output: `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, as `kubectl get` asks.

kubectl does not format objects itself: it asks the server for a `meta.k8s.io/v1` Table and
prints its columns. Built-in kinds have the columns of kube-apiserver's printers (pods:
READY, STATUS, RESTARTS, AGE, ...), custom resources a NAME column followed by the CRD's
`additionalPrinterColumns` of the version read (AGE when the CRD lists none), their
JSONPaths evaluated as the apiextensions table convertor does.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from flarekit_testing.apiserver._resources import ResourceType
from flarekit_testing.apiserver._strategy import Column, Strategy

JSON = dict[str, Any]

NAME = Column("Name", format="name", description="Name must be unique within a namespace.")
AGE = Column(
    "Age",
    description="CreationTimestamp is a timestamp representing the server time when this "
    "object was created.",
)
_AGE_PRINTER = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
_TABLE_MEDIA = re.compile(r"as=Table", re.IGNORECASE)


def wants_table(accept: str) -> bool:
    """Whether the first acceptable media type asks for a Table (`as=Table;g=meta.k8s.io`)."""
    first = accept.split(",")[0]
    return bool(_TABLE_MEDIA.search(first)) and "g=meta.k8s.io" in first.replace(" ", "")


def human_duration(seconds: float) -> str:
    """apimachinery's HumanDuration: `5s`, `3m20s`, `4h`, `2d3h`, `1y30d`."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def since(stamp: Any) -> str:
    """How long ago an RFC 3339 timestamp was, as kubectl prints ages (`<unknown>` if none)."""
    if not isinstance(stamp, str) or not stamp:
        return "<unknown>"
    try:
        when = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    return human_duration((datetime.datetime.now(datetime.UTC) - when).total_seconds())


# -- custom resources ----------------------------------------------------------------------


def _jsonpath(obj: Any, path: str) -> tuple[bool, Any]:
    """The first value a simple JSONPath (`.a.b[0].c`, `.a['x.y']`) finds."""
    tokens = re.findall(r"\.([^.\[\]]+)|\[(\d+|'[^']*'|\"[^\"]*\")\]", path)
    node = obj
    for name, index in tokens:
        if name:
            if not isinstance(node, Mapping) or name not in node:
                return False, None
            node = node[name]
        elif index.isdigit():
            if not isinstance(node, list) or int(index) >= len(node):
                return False, None
            node = node[int(index)]
        else:
            key = index[1:-1]
            if not isinstance(node, Mapping) or key not in node:
                return False, None
            node = node[key]
    return True, node


def _printed(value: Any) -> str:
    """A value as client-go's jsonpath printer prints it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _custom_cell(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "string":
        return _printed(value)
    if kind == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return since(value)
    return None


class CustomColumns:
    """NAME plus a CRD version's additionalPrinterColumns (AGE when it has none)."""

    def __init__(self, printer_columns: Sequence[Mapping[str, Any]]) -> None:
        self.printers = list(printer_columns) or [_AGE_PRINTER]

    def columns(self) -> list[Column]:
        out = [NAME]
        for p in self.printers:
            path = str(p.get("jsonPath", ""))
            out.append(
                Column(
                    str(p.get("name", "")),
                    type=str(p.get("type", "string")),
                    format=str(p.get("format", "")),
                    description=str(p.get("description") or "")
                    or f"Custom resource definition column (in JSONPath format): {path}",
                    priority=int(p.get("priority", 0) or 0),
                )
            )
        return out

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        out: list[Any] = [(obj.get("metadata") or {}).get("name", "")]
        for p in self.printers:
            found, value = _jsonpath(obj, str(p.get("jsonPath", "")))
            out.append(_custom_cell(str(p.get("type", "string")), value) if found else None)
        return out


# -- the Table -----------------------------------------------------------------------------


def _partial(obj: Mapping[str, Any]) -> JSON:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata") or {},
    }


def table(
    printer: Strategy | CustomColumns,
    objects: Sequence[Mapping[str, Any]],
    list_meta: Mapping[str, Any],
    include_object: str = "Metadata",
    no_headers: bool = False,
) -> JSON:
    """A meta.k8s.io/v1 Table of `objects` (one object: a list of one)."""
    rows = []
    for obj in objects:
        row: JSON = {"cells": printer.cells(obj)}
        if include_object == "Object":
            row["object"] = dict(obj)
        elif include_object != "None":
            row["object"] = _partial(obj)
        rows.append(row)
    out: JSON = {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(list_meta),
        "columnDefinitions": None if no_headers else [c.to_json() for c in printer.columns()],
        "rows": rows,
    }
    return out


def printer_for(rt: ResourceType, version: str) -> Strategy | CustomColumns:
    """The strategy of a built-in kind, or the printer columns of a CRD version."""
    if rt.strategy is not None and rt.strategy.columns():
        return rt.strategy
    columns = dict(rt.printer_columns).get(version, ())
    return CustomColumns(columns)


def watch_event_table(
    rt: ResourceType, version: str, obj: Mapping[str, Any], query: Any, first: bool
) -> JSON:
    """A watched object as the Table kube-apiserver sends in a watch event: one row, the
    column definitions only in the watch's first event (bookmarks too are one-row tables)."""
    include = (query.get("includeObject") or ["Metadata"])[-1]
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    meta = {"resourceVersion": rv} if rv else {}
    return table(printer_for(rt, version), [obj], meta, include, no_headers=not first)


def as_table(rt: ResourceType, version: str, body: Mapping[str, Any], query: Any) -> JSON:
    """A get or list response body turned into the Table `kubectl get` asked for."""
    include = (query.get("includeObject") or ["Metadata"])[-1]
    printer = printer_for(rt, version)
    if isinstance(body.get("items"), list):
        meta = {k: v for k, v in (body.get("metadata") or {}).items() if k != "selfLink"}
        return table(printer, body["items"], meta, include)
    rv = (body.get("metadata") or {}).get("resourceVersion")
    return table(printer, [body], {"resourceVersion": rv} if rv else {}, include)
