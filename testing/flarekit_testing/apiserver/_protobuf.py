"""Request bodies in Kubernetes' protobuf encoding, read into the JSON form of the object.

client-go's typed clients send built-in objects as `application/vnd.kubernetes.protobuf`
(kubectl does for `create namespace|secret|configmap|serviceaccount|service` and for
`auth can-i` / `auth whoami`), and they never fall back to JSON. The envelope is the magic
`k8s\\x00` followed by a `runtime.Unknown` (typeMeta, raw bytes). The raw message is read
with a table of field numbers per message type, the numbers of k8s.io/api's `.proto` files
for the kinds FakeCluster serves. A field the table does not know is refused with 400
rather than dropped, so nothing a client sends is silently lost.
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

JSON = dict[str, Any]

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"


class ProtobufError(ValueError):
    """The body is not a protobuf message FakeCluster can read."""


def is_protobuf(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == MEDIA_TYPE


# -- message tables: field number -> (JSON name, type) --------------------------------------
# Types: "string", "bytes" (base64 in JSON), "int", "bool", "time", "intstr", "ignored" (a
# status the server resets on create anyway),
# "map:string" / "map:bytes" (map<string, ...>), "[]<type>" (repeated), or a message name.

MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "TypeMeta": {1: ("apiVersion", "string"), 2: ("kind", "string")},
    "Unknown": {
        1: ("typeMeta", "TypeMeta"),
        2: ("raw", "raw"),
        3: ("contentEncoding", "string"),
        4: ("contentType", "string"),
    },
    "ObjectMeta": {
        1: ("name", "string"),
        2: ("generateName", "string"),
        3: ("namespace", "string"),
        4: ("selfLink", "string"),
        5: ("uid", "string"),
        6: ("resourceVersion", "string"),
        7: ("generation", "int"),
        8: ("creationTimestamp", "time"),
        9: ("deletionTimestamp", "time"),
        10: ("deletionGracePeriodSeconds", "int"),
        11: ("labels", "map:string"),
        12: ("annotations", "map:string"),
        13: ("ownerReferences", "[]OwnerReference"),
        14: ("finalizers", "[]string"),
        17: ("managedFields", "[]ManagedFieldsEntry"),
    },
    "OwnerReference": {
        1: ("kind", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("controller", "bool"),
        7: ("blockOwnerDeletion", "bool"),
    },
    "ManagedFieldsEntry": {
        1: ("manager", "string"),
        2: ("operation", "string"),
        3: ("apiVersion", "string"),
        4: ("time", "time"),
        6: ("fieldsType", "string"),
        7: ("fieldsV1", "FieldsV1"),
        8: ("subresource", "string"),
    },
    "FieldsV1": {1: ("Raw", "bytes")},
    "Time": {1: ("seconds", "int"), 2: ("nanos", "int")},
    "IntOrString": {1: ("type", "int"), 2: ("intVal", "int"), 3: ("strVal", "string")},
    "ObjectReference": {
        1: ("kind", "string"),
        2: ("namespace", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
        5: ("apiVersion", "string"),
        6: ("resourceVersion", "string"),
        7: ("fieldPath", "string"),
    },
    "LocalObjectReference": {1: ("name", "string")},
    "Namespace": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "NamespaceSpec"),
        3: ("status", "ignored"),
    },
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "ConfigMap": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "map:string"),
        3: ("binaryData", "map:bytes"),
        4: ("immutable", "bool"),
    },
    "Secret": {
        1: ("metadata", "ObjectMeta"),
        2: ("data", "map:bytes"),
        3: ("type", "string"),
        4: ("stringData", "map:string"),
        5: ("immutable", "bool"),
    },
    "ServiceAccount": {
        1: ("metadata", "ObjectMeta"),
        2: ("secrets", "[]ObjectReference"),
        3: ("imagePullSecrets", "[]LocalObjectReference"),
        4: ("automountServiceAccountToken", "bool"),
    },
    "Service": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "ServiceSpec"),
        3: ("status", "ignored"),
    },
    "ServiceSpec": {
        1: ("ports", "[]ServicePort"),
        2: ("selector", "map:string"),
        3: ("clusterIP", "string"),
        4: ("type", "string"),
        5: ("externalIPs", "[]string"),
        7: ("sessionAffinity", "string"),
        8: ("loadBalancerIP", "string"),
        9: ("loadBalancerSourceRanges", "[]string"),
        10: ("externalName", "string"),
        11: ("externalTrafficPolicy", "string"),
        12: ("healthCheckNodePort", "int"),
        13: ("publishNotReadyAddresses", "bool"),
        17: ("ipFamilyPolicy", "string"),
        18: ("clusterIPs", "[]string"),
        19: ("ipFamilies", "[]string"),
        20: ("allocateLoadBalancerNodePorts", "bool"),
        21: ("loadBalancerClass", "string"),
        22: ("internalTrafficPolicy", "string"),
        23: ("trafficDistribution", "string"),
    },
    "ServicePort": {
        1: ("name", "string"),
        2: ("protocol", "string"),
        3: ("port", "int"),
        4: ("targetPort", "intstr"),
        5: ("nodePort", "int"),
        6: ("appProtocol", "string"),
    },
    "SelfSubjectAccessReview": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "SelfSubjectAccessReviewSpec"),
        3: ("status", "ignored"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: ("resourceAttributes", "ResourceAttributes"),
        2: ("nonResourceAttributes", "NonResourceAttributes"),
    },
    "ResourceAttributes": {
        1: ("namespace", "string"),
        2: ("verb", "string"),
        3: ("group", "string"),
        4: ("version", "string"),
        5: ("resource", "string"),
        6: ("subresource", "string"),
        7: ("name", "string"),
    },
    "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
    "SelfSubjectRulesReview": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "SelfSubjectRulesReviewSpec"),
        3: ("status", "ignored"),
    },
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "string")},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta"), 2: ("status", "ignored")},
    "TokenReview": {
        1: ("metadata", "ObjectMeta"),
        2: ("spec", "TokenReviewSpec"),
        3: ("status", "ignored"),
    },
    "TokenReviewSpec": {1: ("token", "string"), 2: ("audiences", "[]string")},
}


# -- wire format ---------------------------------------------------------------------------


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(data):
            raise ProtobufError("unexpected EOF")
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ProtobufError("proto: integer overflow")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) for each field of one message."""
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            length, i = _varint(data, i)
            if i + length > len(data):
                raise ProtobufError("unexpected EOF")
            value, i = data[i : i + length], i + length
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ProtobufError(f"proto: illegal wireType {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, value: Any) -> Any:
    if kind == "string":
        return bytes(value).decode("utf-8")
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if kind == "int":
        return _signed(int(value))
    if kind == "bool":
        return bool(value)
    raise ProtobufError(f"unknown scalar type {kind}")


def _time(data: bytes) -> str | None:
    parts = message(data, "Time")
    seconds = int(parts.get("seconds", 0))
    if seconds <= -62135596800:  # Go's zero time: the field was not set
        return None
    when = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _intstr(data: bytes) -> Any:
    parts = message(data, "IntOrString")
    return parts.get("strVal", "") if parts.get("type") == 1 else parts.get("intVal", 0)


def _map_entry(data: bytes, value_kind: str) -> tuple[str, Any]:
    key, value = "", "" if value_kind == "string" else b""
    for number, _, raw in _fields(data):
        if number == 1:
            key = bytes(raw).decode("utf-8")
        elif number == 2:
            value = raw
    return key, _scalar(value_kind, value if isinstance(value, bytes) else b"")


def _value(kind: str, raw: Any) -> Any:
    if kind == "ignored":
        return None
    if kind == "time":
        return _time(raw)
    if kind == "intstr":
        return _intstr(raw)
    if kind == "raw":
        return bytes(raw)
    if kind in MESSAGES:
        return message(raw, kind)
    return _scalar(kind, raw)


def message(data: bytes, name: str) -> JSON:
    """Decode one message of type `name` into its JSON form (zero values left out)."""
    table = MESSAGES[name]
    out: JSON = {}
    for number, _, raw in _fields(data):
        entry = table.get(number)
        if entry is None:
            raise ProtobufError(
                f"FakeCluster cannot read field {number} of {name} in protobuf; "
                "send the object as JSON"
            )
        field, kind = entry
        if kind.startswith("map:"):
            key, value = _map_entry(raw, kind[4:])
            out.setdefault(field, {})[key] = value
        elif kind.startswith("[]"):
            out.setdefault(field, []).append(_value(kind[2:], raw))
        else:
            value = _value(kind, raw)
            if value is not None:
                out[field] = value
    return {k: v for k, v in out.items() if v not in ("", {}, [])}


def decode_protobuf(body: bytes, kind: str) -> JSON:
    """A protobuf request body (envelope included) as the JSON object of kind `kind`."""
    if not body.startswith(MAGIC):
        raise ProtobufError("provided object is not a protobuf message: missing magic prefix")
    envelope = message(body[len(MAGIC) :], "Unknown")
    type_meta = envelope.get("typeMeta") or {}
    sent = type_meta.get("kind") or kind
    if sent not in MESSAGES:
        raise ProtobufError(f"FakeCluster cannot read {sent} in protobuf; send it as JSON")
    obj = message(envelope.get("raw") or b"", sent)
    out: JSON = {}
    if type_meta.get("apiVersion"):
        out["apiVersion"] = type_meta["apiVersion"]
    out["kind"] = sent
    out.update(obj)
    return out
