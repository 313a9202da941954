"""Admission webhooks: what an operator's webhooks change or refuse before a write is stored.

Why: an installed operator answers some writes before its controller ever runs. Kueue's
webhooks put their finalizer on every new ClusterQueue and ResourceFlavor, store its quotas
as canonical quantities (`nominalQuota: 9` is read back as `"9"`, which then conflicts with a
second manager's identical apply), suspend a job that names a queue, and refuse a queued
RayJob that would keep its cluster; and a webhook decodes the object into its Go type first,
so a field of the wrong type is a 400 from the webhook rather than the schema's 422. Users
see those answers, so a simulated operator brings its webhooks (`webhooks` on the
controller, see `FakeCluster.add_controller`).

The order is kube-apiserver's: the writer's own fields are recorded first (webhook changes
are owned by no one), then mutating webhooks in turn, then the object is defaulted, pruned
and validated again, then validating webhooks. Mutating webhooks see creates and updates
alike; what a webhook handles is its own to say (`handles`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from flarekit_testing.apiserver import _errors
from flarekit_testing.apiserver._schema import Schema, compiled

__all__ = [
    "AdmissionRequest",
    "AdmissionWebhook",
    "decode_error",
    "denied",
    "mutate",
    "validate",
]

JSON = dict[str, Any]


@dataclass
class AdmissionRequest:
    """One write as a webhook receives it. `obj` is the object about to be stored (mutating
    webhooks change it in place); `old` the stored one for an update."""

    operation: str  # CREATE or UPDATE
    group: str
    plural: str
    kind: str
    namespace: str
    name: str
    user: str
    obj: JSON
    old: JSON | None
    schema: Mapping[str, Any] | None

    @property
    def labels(self) -> Mapping[str, str]:
        return (self.obj.get("metadata") or {}).get("labels") or {}


@runtime_checkable
class AdmissionWebhook(Protocol):
    """An operator's admission webhook: `mutate` may change the request's object, `validate`
    may refuse it (raise `denied(...)`); both only for what `handles` accepts."""

    def handles(self, group: str, plural: str, operation: str) -> bool: ...

    def mutate(self, request: AdmissionRequest) -> None: ...

    def validate(self, request: AdmissionRequest) -> None: ...


def denied(webhook: str, message: str, code: int = 403) -> _errors.ApiError:
    """A webhook's refusal as kube-apiserver relays it: 403 Forbidden for a denial, 400
    without a reason for an object the webhook could not read."""
    reason = "Forbidden" if code == 403 else ""
    text = f'admission webhook "{webhook}" denied the request: {message}'
    return _errors.ApiError(code, reason, text, {})


def mutate(webhooks: list[AdmissionWebhook], request: AdmissionRequest) -> bool:
    """Run the mutating webhooks that handle the request; whether any changed the object."""
    before = repr(request.obj)
    for webhook in webhooks:
        if webhook.handles(request.group, request.plural, request.operation):
            webhook.mutate(request)
    return repr(request.obj) != before


def validate(webhooks: list[AdmissionWebhook], request: AdmissionRequest) -> None:
    for webhook in webhooks:
        if webhook.handles(request.group, request.plural, request.operation):
            webhook.validate(request)


# -- reading an object into its Go type ------------------------------------------------------

_JSON_KIND = {bool: "bool", str: "string", int: "number", float: "number", dict: "object"}


def _json_kind(value: Any) -> str:
    return "array" if isinstance(value, list) else _JSON_KIND.get(type(value), "object")


def _go_type(s: Schema, key: str) -> str:
    if s.types == ("integer", "string"):
        return "intstr.IntOrString"
    kind = s.types[0] if s.types else "object"
    if kind == "integer":
        return s.format if s.format in ("int32", "int64") else "int"
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "array":
        return "[]" + (_go_type(s.items, key) if s.items is not None else "interface {}")
    if kind == "object" and not s.properties:
        return "map[string]string"
    return key[:1].upper() + key[1:] if kind == "object" else kind


def _fits(value: Any, s: Schema) -> bool:
    if value is None or not s.types:
        return True
    if isinstance(value, bool):
        return "boolean" in s.types
    if isinstance(value, int):
        return bool({"integer", "number"} & set(s.types))
    if isinstance(value, float):  # Go reads 1.0 into a float only
        return "number" in s.types
    if isinstance(value, str):
        return "string" in s.types
    return ("array" if isinstance(value, list) else "object") in s.types


def decode_error(obj: Mapping[str, Any], schema: Mapping[str, Any], kind: str) -> str | None:
    """What Go's `encoding/json` says when `obj` does not fit the operator's Go type (the
    CRD's schema stands in for it), or None. Go reports the first mismatch it meets; the
    struct it names is the field's parent, as near as the schema tells it."""
    found = _first_mismatch(obj, compiled(schema), (), kind)
    if found is None:
        return None
    path, value, s, struct = found
    return (
        f"json: cannot unmarshal {_json_kind(value)} into Go struct field "
        f"{struct}.{'.'.join(path)} of type {_go_type(s, path[-1])}"
    )


def _first_mismatch(
    value: Any, s: Schema, path: tuple[str, ...], struct: str
) -> tuple[tuple[str, ...], Any, Schema, str] | None:
    if path and not _fits(value, s):
        return path, value, s, struct
    if isinstance(value, dict):
        inner = f"{struct}Spec" if path == ("spec",) else _go_type(s, path[-1]) if path else struct
        for key, member in value.items():
            child = s.child_schema(key)
            if child is None or (not path and key in ("apiVersion", "kind", "metadata")):
                continue
            if key not in s.properties:  # a map's value: Go names the map's field
                if not _fits(member, child):
                    return path, member, child, struct
                continue
            found = _first_mismatch(member, child, (*path, key), inner)
            if found is not None:
                return found
    elif isinstance(value, list) and s.items is not None:
        for item in value:
            found = _first_mismatch(item, s.items, path, struct)
            if found is not None:
                return found
    return None
