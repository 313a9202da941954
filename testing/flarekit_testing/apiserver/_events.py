"""Events, read and written through core/v1 and events.k8s.io/v1: one storage, two shapes.

Events are stored as core Events; events.k8s.io/v1 renames fields on the way in and out
(involvedObject/regarding, message/note, source/deprecatedSource, ...) as kube-apiserver's
conversion does. Both have their validation (the legacy rules for core, the strict ones for
events.k8s.io), their field selectors, the fields a typed Event always carries when read,
and kubectl's event columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._names import go_quote, qualified_name_errors
from flarekit_testing.apiserver._resources import ResourceType
from flarekit_testing.apiserver._schema_shapes import (
    INTEGER,
    OBJECT_REFERENCE,
    STRING,
    TIME,
    kind_schema,
    obj,
    v1_versions,
)
from flarekit_testing.apiserver._strategy import Column, Strategy
from flarekit_testing.apiserver._tables import since

JSON = dict[str, Any]


# -- events --------------------------------------------------------------------------------

_EVENT_SOURCE = obj({"component": STRING, "host": STRING})
_EVENT_SERIES = obj({"count": INTEGER, "lastObservedTime": {"type": "string"}})
EVENT_SCHEMA = kind_schema(
    involvedObject=OBJECT_REFERENCE,
    reason=STRING,
    message=STRING,
    source=_EVENT_SOURCE,
    firstTimestamp=TIME,
    lastTimestamp=TIME,
    count=INTEGER,
    type=STRING,
    eventTime={"type": "string"},
    series=_EVENT_SERIES,
    action=STRING,
    related=OBJECT_REFERENCE,
    reportingComponent=STRING,
    reportingInstance=STRING,
)
_RENAMES = (
    ("involvedObject", "regarding"),
    ("source", "deprecatedSource"),
    ("message", "note"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
)
EVENTS_V1_SCHEMA = kind_schema(
    regarding=OBJECT_REFERENCE,
    reason=STRING,
    note=STRING,
    deprecatedSource=_EVENT_SOURCE,
    deprecatedFirstTimestamp=TIME,
    deprecatedLastTimestamp=TIME,
    deprecatedCount=INTEGER,
    type=STRING,
    eventTime={"type": "string"},
    series=_EVENT_SERIES,
    action=STRING,
    related=OBJECT_REFERENCE,
    reportingController=STRING,
    reportingInstance=STRING,
)
#: What a typed Event always carries when read (Go fields without `omitempty`).
_CORE_EVENT_FIELDS: tuple[tuple[str, Any], ...] = (
    ("source", {}),
    ("firstTimestamp", None),
    ("lastTimestamp", None),
    ("eventTime", None),
    ("reportingComponent", ""),
    ("reportingInstance", ""),
)
_V1_EVENT_FIELDS: tuple[tuple[str, Any], ...] = (
    ("eventTime", None),
    ("deprecatedSource", {}),
    ("deprecatedFirstTimestamp", None),
    ("deprecatedLastTimestamp", None),
)
EVENT_FIELDS = {
    "involvedObject.kind": "involvedObject.kind",
    "involvedObject.namespace": "involvedObject.namespace",
    "involvedObject.name": "involvedObject.name",
    "involvedObject.uid": "involvedObject.uid",
    "involvedObject.apiVersion": "involvedObject.apiVersion",
    "involvedObject.resourceVersion": "involvedObject.resourceVersion",
    "involvedObject.fieldPath": "involvedObject.fieldPath",
    "reason": "reason",
    "reportingComponent": "reportingComponent",
    "source": "source.component",
    "type": "type",
}


class EventStrategy(Strategy):
    """core/v1 Events (the legacy validation kube-apiserver keeps for them)."""

    generation = False
    names = "segment"
    typed = True
    fields: ClassVar[Mapping[str, str]] = EVENT_FIELDS
    controller_field = "reportingComponent"

    def validate(self, obj: JSON) -> list[Cause]:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace", "")
        involved = obj.get("involvedObject") or {}
        target_ns = involved.get("namespace") or ""
        causes: list[Cause] = []
        mismatch = Cause(
            "FieldValueInvalid",
            f"Invalid value: {go_quote(target_ns)}: does not match event.namespace",
            "involvedObject.namespace",
        )
        if not obj.get("eventTime"):
            if (target_ns and target_ns != namespace) or (
                not target_ns and namespace not in ("", "default")
            ):
                causes.append(mismatch)
            return causes
        if not target_ns and namespace not in ("default", "kube-system"):
            causes.append(mismatch)
        controller = obj.get("reportingComponent") or ""
        if not controller:
            causes.append(Cause("FieldValueRequired", "Required value", self.controller_field))
        for msg in qualified_name_errors(controller) if controller else []:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {go_quote(controller)}: {msg}",
                    self.controller_field,
                )
            )
        for key in ("reportingInstance", "action", "reason"):
            if not obj.get(key):
                causes.append(Cause("FieldValueRequired", "Required value", key))
        return causes

    def zero(self) -> JSON:
        return {"involvedObject": {}, **{k: copy_json(v) for k, v in _CORE_EVENT_FIELDS}}

    def from_stored(self, obj: JSON, api_version: str) -> JSON:
        """Fields without `omitempty` in the Go type are always there, empty or null."""
        out = super().from_stored(obj, api_version)
        for key, empty in _CORE_EVENT_FIELDS:
            out.setdefault(key, copy_json(empty))
        return out

    def columns(self) -> list[Column]:
        return [
            Column("Last Seen", description="The time at which the most recent occurrence of this event was recorded."),
            Column("Type", description="Type of this event (Normal, Warning), new types could be added in the future"),
            Column("Reason", description="This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
            Column("Object", description="The object that this event is about."),
            Column("Subobject", priority=1, description="If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]."),
            Column("Source", priority=1, description="The component reporting this event. Should be a short machine understandable string."),
            Column("Message", description="A human-readable description of the status of this operation."),
            Column("First Seen", priority=1, description="The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"),
            Column("Count", priority=1, description="The number of times this event has occurred."),
            Column("Name", priority=1, format="name", description="Name must be unique within a namespace."),
        ]  # fmt: skip

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        first = since(obj.get("firstTimestamp") or obj.get("eventTime"))
        last = since(obj.get("lastTimestamp")) if obj.get("lastTimestamp") else first
        series = obj.get("series") or {}
        count = obj.get("count") or 0
        if series:
            last, count = since(series.get("lastObservedTime")), series.get("count", 0)
        elif not count:
            count = 1
        involved = obj.get("involvedObject") or {}
        kind = str(involved.get("kind", "")).lower()
        target = f"{kind}/{involved['name']}" if involved.get("name") else kind
        source = obj.get("source") or {}
        reporter = source.get("component") or obj.get("reportingComponent") or ""
        host = source.get("host") or obj.get("reportingInstance") or ""
        return [
            last,
            obj.get("type", ""),
            obj.get("reason", ""),
            target,
            involved.get("fieldPath", ""),
            f"{reporter}, {host}" if host else reporter,
            str(obj.get("message", "")).strip(),
            first,
            int(count),
            (obj.get("metadata") or {}).get("name", ""),
        ]


class EventsV1Strategy(EventStrategy):
    """events.k8s.io/v1 Events: stored as core Events, converted on the way in and out."""

    names = "subdomain"
    controller_field = "reportingController"
    fields: ClassVar[Mapping[str, str]] = {
        "regarding.kind": "involvedObject.kind",
        "regarding.namespace": "involvedObject.namespace",
        "regarding.name": "involvedObject.name",
        "regarding.uid": "involvedObject.uid",
        "regarding.apiVersion": "involvedObject.apiVersion",
        "regarding.resourceVersion": "involvedObject.resourceVersion",
        "regarding.fieldPath": "involvedObject.fieldPath",
        "reportingController": "reportingComponent",
        "reason": "reason",
        "type": "type",
    }

    def validate(self, obj: JSON) -> list[Cause]:
        causes = super().validate(obj)
        if not obj.get("eventTime"):
            causes.append(Cause("FieldValueRequired", "Required value", "eventTime"))
        kind = obj.get("type") or ""
        if kind not in ("Normal", "Warning"):
            causes.append(
                Cause("FieldValueInvalid", f'Invalid value: "": has invalid value: {kind}', "type")
            )
        for key, label in (
            ("firstTimestamp", "deprecatedFirstTimestamp"),
            ("lastTimestamp", "deprecatedLastTimestamp"),
            ("count", "deprecatedCount"),
        ):
            if obj.get(key):
                causes.append(
                    Cause("FieldValueInvalid", 'Invalid value: "": needs to be unset', label)
                )
        return causes

    def zero(self) -> JSON:
        return {"regarding": {}, **{k: copy_json(v) for k, v in _V1_EVENT_FIELDS}}

    def to_stored(self, obj: JSON) -> JSON:
        out = dict(obj)
        for core, v1 in _RENAMES:
            if v1 in out:
                out[core] = out.pop(v1)
        out["apiVersion"], out["kind"] = "v1", "Event"
        return out

    def from_stored(self, obj: JSON, api_version: str) -> JSON:
        out = dict(obj)
        for core, v1 in _RENAMES:
            if core in out:
                out[v1] = out.pop(core)
        out["apiVersion"], out["kind"] = api_version, "Event"
        for key, empty in _V1_EVENT_FIELDS:
            out.setdefault(key, copy_json(empty))
        return out


EVENTS = ResourceType(
    group="",
    plural="events",
    singular="event",
    kind="Event",
    list_kind="EventList",
    namespaced=True,
    versions=v1_versions(EVENT_SCHEMA),
    short_names=("ev",),
    strategy=EventStrategy(),
)
EVENTS_V1 = ResourceType(
    group="events.k8s.io",
    plural="events",
    singular="event",
    kind="Event",
    list_kind="EventList",
    namespaced=True,
    versions=v1_versions(EVENTS_V1_SCHEMA),
    short_names=("ev",),
    strategy=EventsV1Strategy(),
    stored_as=("", "events"),
)
