"""The built-in kinds every cluster serves and users' code touches, with their strategies.

Namespaces, ConfigMaps, Secrets, ServiceAccounts, Services, Events (core and
`events.k8s.io`, one storage) and Ingresses. Each has a structural schema of its fields (list
types, keys and patch strategies included, so apply and strategic merge work on them), the
defaults kube-apiserver's defaulting and strategy set, the validation that matters to users'
code (names, immutable fields, Secret data as base64, config keys, service ports), the field
selectors the real server offers, and the columns `kubectl get` prints.

Pods, with their log subresource and kubelet-like states, are in `_pods`.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from flarekit.testing._errors import Cause
from flarekit.testing._json import copy_json
from flarekit.testing._names import go_quote, qualified_name_errors
from flarekit.testing._resources import ResourceType, Version
from flarekit.testing._schema_shapes import (
    BOOLEAN,
    BYTES,
    INT_OR_STRING,
    INTEGER,
    LOCAL_REFERENCE,
    OBJECT_REFERENCE,
    OPEN,
    STRING,
    STRING_MAP,
    TIME,
    atomic_list,
    keyed_list,
    kind_schema,
    map_of,
    merge_list,
    obj,
)
from flarekit.testing._strategy import Column, Strategy
from flarekit.testing._tables import AGE, NAME, since

JSON = dict[str, Any]

IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"
FIELD_IMMUTABLE = "field is immutable"
MAX_DATA_BYTES = 1024 * 1024
_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)


def _v1(schema: JSON, status: bool = False) -> tuple[Version, ...]:
    return (Version("v1", True, True, schema, status_subresource=status),)


def _forbidden(path: str, why: str = IMMUTABLE) -> Cause:
    return Cause("FieldValueForbidden", why, path)


def _immutable(path: str, value: Any) -> Cause:
    shown = go_quote(value) if isinstance(value, str) else str(value)
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {FIELD_IMMUTABLE}", path)


def config_key_errors(key: str) -> list[str]:
    """apimachinery's IsConfigMapKey."""
    errs = []
    if len(key) > 253:
        errs.append("must be no more than 253 characters")
    if not _CONFIG_KEY.fullmatch(key):
        errs.append(_CONFIG_KEY_MSG)
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _key_causes(bag: str, data: Any) -> list[Cause]:
    causes = []
    for key in data or {}:
        for msg in config_key_errors(str(key)):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {go_quote(str(key))}: {msg}",
                    f"{bag}[{key}]",
                )
            )
    return causes


def _base64_error(value: Any) -> str | None:
    """Why Go's encoding/json would refuse `value` for a []byte field, or None."""
    if not isinstance(value, str):
        return None
    alphabet = re.compile(r"[A-Za-z0-9+/]")
    body = value.rstrip("=")
    for i, char in enumerate(body):
        if not alphabet.fullmatch(char):
            return f"illegal base64 data at input byte {i}"
    if len(value) % 4:
        return f"illegal base64 data at input byte {len(value) - len(value) % 4}"
    try:
        base64.b64decode(value, validate=True)
    except ValueError:
        return f"illegal base64 data at input byte {len(body)}"
    return None


# -- namespaces ----------------------------------------------------------------------------


class NamespaceStrategy(Strategy):
    generation = False
    names = "label"
    typed = True
    fields: ClassVar[Mapping[str, str]] = {"status.phase": "status.phase"}

    def prepare_create(self, obj: JSON) -> None:
        name = obj["metadata"].get("name") or ""
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}

    def prepare_update(self, new: JSON, old: JSON) -> None:
        new["spec"] = copy_json(old.get("spec", {}))
        name = new["metadata"].get("name") or ""
        new["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name

    def columns(self) -> list[Column]:
        return [NAME, Column("Status", description="The status of the namespace"), AGE]

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta = obj.get("metadata") or {}
        phase = (obj.get("status") or {}).get("phase", "")
        return [meta.get("name", ""), phase, since(meta.get("creationTimestamp"))]


NAMESPACE_SCHEMA = kind_schema(
    spec=obj({"finalizers": atomic_list(STRING)}),
    status=obj({"phase": STRING, "conditions": OPEN}, open_=True),
)
NAMESPACES = ResourceType(
    group="",
    plural="namespaces",
    singular="namespace",
    kind="Namespace",
    list_kind="NamespaceList",
    namespaced=False,
    versions=_v1(NAMESPACE_SCHEMA, status=True),
    short_names=("ns",),
    strategy=NamespaceStrategy(),
    verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
)


# -- configmaps and secrets ----------------------------------------------------------------


class ConfigMapStrategy(Strategy):
    generation = False
    typed = True

    def decode(self, obj: JSON) -> str | None:
        for key, value in (obj.get("binaryData") or {}).items():
            problem = _base64_error(value)
            if problem:
                return problem
            del key
        return None

    def validate(self, obj: JSON) -> list[Cause]:
        data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        causes = _key_causes("data", data) + _key_causes("binaryData", binary)
        for key in data:
            if key in binary:
                causes.append(
                    Cause(
                        "FieldValueInvalid",
                        f"Invalid value: {go_quote(key)}: duplicate of key present in binaryData",
                        f"data[{key}]",
                    )
                )
        size = sum(len(str(v)) for v in data.values()) + sum(
            len(base64.b64decode(v)) for v in binary.values() if isinstance(v, str)
        )
        if size > MAX_DATA_BYTES:
            causes.append(
                Cause("FieldValueTooLong", f"Too long: may not be more than {MAX_DATA_BYTES} bytes")
            )
        return causes

    def validate_update(self, new: JSON, old: JSON) -> list[Cause]:
        causes = []
        if old.get("immutable"):
            if not new.get("immutable"):
                causes.append(_forbidden("immutable"))
            for bag in ("data", "binaryData"):
                if (new.get(bag) or {}) != (old.get(bag) or {}):
                    causes.append(_forbidden(bag))
        return causes

    def columns(self) -> list[Column]:
        return [NAME, Column("Data", description="Data contains the configuration data."), AGE]

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta = obj.get("metadata") or {}
        count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
        return [meta.get("name", ""), count, since(meta.get("creationTimestamp"))]


CONFIGMAP_SCHEMA = kind_schema(data=STRING_MAP, binaryData=map_of(BYTES), immutable=BOOLEAN)
CONFIGMAPS = ResourceType(
    group="",
    plural="configmaps",
    singular="configmap",
    kind="ConfigMap",
    list_kind="ConfigMapList",
    namespaced=True,
    versions=_v1(CONFIGMAP_SCHEMA),
    short_names=("cm",),
    strategy=ConfigMapStrategy(),
)


class SecretStrategy(Strategy):
    generation = False
    typed = True
    fields: ClassVar[Mapping[str, str]] = {"type": "type"}

    def decode(self, obj: JSON) -> str | None:
        for value in (obj.get("data") or {}).values():
            problem = _base64_error(value)
            if problem:
                return problem
        return None

    def prepare_create(self, obj: JSON) -> None:
        _fold_string_data(obj)
        obj.setdefault("type", "Opaque")

    def prepare_update(self, new: JSON, old: JSON) -> None:
        _fold_string_data(new)
        if not new.get("type"):
            new["type"] = old.get("type", "Opaque")

    def validate(self, obj: JSON) -> list[Cause]:
        data = obj.get("data") or {}
        causes = _key_causes("data", data)
        size = sum(len(base64.b64decode(v)) for v in data.values() if isinstance(v, str))
        if size > MAX_DATA_BYTES:
            causes.append(
                Cause(
                    "FieldValueTooLong",
                    f"Too long: may not be more than {MAX_DATA_BYTES} bytes",
                    "data",
                )
            )
        kind = obj.get("type") or "Opaque"
        required = {
            "kubernetes.io/dockerconfigjson": [".dockerconfigjson"],
            "kubernetes.io/dockercfg": [".dockercfg"],
            "kubernetes.io/ssh-auth": ["ssh-privatekey"],
            "kubernetes.io/tls": ["tls.crt", "tls.key"],
        }.get(kind, [])
        for key in required:
            if key not in data:
                causes.append(Cause("FieldValueRequired", "Required value", f"data[{key}]"))
        if kind == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
            causes.append(Cause("FieldValueRequired", "Required value", "data[username]"))
            causes.append(Cause("FieldValueRequired", "Required value", "data[password]"))
        if kind == "kubernetes.io/service-account-token":
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if not annotations.get("kubernetes.io/service-account.name"):
                causes.append(
                    Cause(
                        "FieldValueRequired",
                        "Required value",
                        "metadata.annotations[kubernetes.io/service-account.name]",
                    )
                )
        return causes

    def validate_update(self, new: JSON, old: JSON) -> list[Cause]:
        causes = []
        if (new.get("type") or "Opaque") != (old.get("type") or "Opaque"):
            causes.append(_immutable("type", new.get("type") or ""))
        if old.get("immutable"):
            if not new.get("immutable"):
                causes.append(_forbidden("immutable"))
            if (new.get("data") or {}) != (old.get("data") or {}):
                causes.append(_forbidden("data"))
        return causes

    def columns(self) -> list[Column]:
        return [
            NAME,
            Column("Type", description="Used to facilitate programmatic handling of secret data."),
            Column("Data", description="Data contains the secret data."),
            AGE,
        ]

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta = obj.get("metadata") or {}
        return [
            meta.get("name", ""),
            obj.get("type", ""),
            len(obj.get("data") or {}),
            since(meta.get("creationTimestamp")),
        ]


def _fold_string_data(obj: JSON) -> None:
    """`stringData` is write-only: its entries are encoded into `data` and it is dropped."""
    given = obj.pop("stringData", None)
    if isinstance(given, dict) and given:
        data = obj.setdefault("data", {})
        for key, value in given.items():
            data[key] = base64.b64encode(str(value).encode()).decode()


SECRET_SCHEMA = kind_schema(
    data=map_of(BYTES), stringData=STRING_MAP, type=STRING, immutable=BOOLEAN
)
SECRETS = ResourceType(
    group="",
    plural="secrets",
    singular="secret",
    kind="Secret",
    list_kind="SecretList",
    namespaced=True,
    versions=_v1(SECRET_SCHEMA),
    strategy=SecretStrategy(),
)


# -- service accounts ------------------------------------------------------------------------


class ServiceAccountStrategy(Strategy):
    generation = False
    typed = True

    def columns(self) -> list[Column]:
        return [NAME, AGE]

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), since(meta.get("creationTimestamp"))]


SERVICEACCOUNT_SCHEMA = kind_schema(
    secrets=merge_list(OBJECT_REFERENCE, "name"),
    imagePullSecrets=atomic_list(LOCAL_REFERENCE),
    automountServiceAccountToken=BOOLEAN,
)
SERVICEACCOUNTS = ResourceType(
    group="",
    plural="serviceaccounts",
    singular="serviceaccount",
    kind="ServiceAccount",
    list_kind="ServiceAccountList",
    namespaced=True,
    versions=_v1(SERVICEACCOUNT_SCHEMA),
    short_names=("sa",),
    strategy=ServiceAccountStrategy(),
)


# -- services ------------------------------------------------------------------------------

SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
PROTOCOLS = ("TCP", "UDP", "SCTP")
_SERVICE_PORT = obj(
    {
        "name": STRING,
        "protocol": {"type": "string", "default": "TCP"},
        "appProtocol": STRING,
        "port": INTEGER,
        "targetPort": INT_OR_STRING,
        "nodePort": INTEGER,
    },
    ["port"],
)
SERVICE_SCHEMA = kind_schema(
    spec=obj(
        {
            "ports": keyed_list(_SERVICE_PORT, ["port", "protocol"], merge_key="port"),
            "selector": map_of(STRING, atomic=True),
            "clusterIP": STRING,
            "clusterIPs": atomic_list(STRING),
            "type": STRING,
            "externalIPs": atomic_list(STRING),
            "sessionAffinity": STRING,
            "loadBalancerIP": STRING,
            "loadBalancerSourceRanges": atomic_list(STRING),
            "externalName": STRING,
            "externalTrafficPolicy": STRING,
            "healthCheckNodePort": INTEGER,
            "publishNotReadyAddresses": BOOLEAN,
            "sessionAffinityConfig": OPEN,
            "ipFamilies": atomic_list(STRING),
            "ipFamilyPolicy": STRING,
            "allocateLoadBalancerNodePorts": BOOLEAN,
            "loadBalancerClass": STRING,
            "internalTrafficPolicy": STRING,
            "trafficDistribution": STRING,
        }
    ),
    status=obj({"loadBalancer": OPEN, "conditions": OPEN}),
)


class ServiceStrategy(Strategy):
    generation = False
    names = "label"  # RFC 1123 labels since RelaxedServiceNameValidation (on by default)
    typed = True

    def prepare_create(self, obj: JSON) -> None:
        spec = obj.setdefault("spec", {})
        kind = spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                if port.get("targetPort") in (None, 0, ""):
                    port["targetPort"] = port.get("port")
        if kind == "ExternalName":
            return
        if kind in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
            for i, port in enumerate(spec.get("ports") or []):
                if isinstance(port, dict):
                    port.setdefault("nodePort", 30000 + _hash(obj, str(i)) % 2768)
        spec.setdefault("internalTrafficPolicy", "Cluster")
        if kind == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)
        if spec.get("clusterIP") != "None":
            spec.setdefault("clusterIP", _cluster_ip(obj))
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        obj["status"] = {"loadBalancer": {}}

    def prepare_update(self, new: JSON, old: JSON) -> None:
        spec, was = new.setdefault("spec", {}), old.get("spec") or {}
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if key not in spec and key in was:
                spec[key] = copy_json(was[key])
        for port in spec.get("ports") or []:
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
                if port.get("targetPort") in (None, 0, ""):
                    port["targetPort"] = port.get("port")
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec.get("type") != "ExternalName":
            spec.setdefault("internalTrafficPolicy", "Cluster")
        new["status"] = copy_json(old.get("status", {"loadBalancer": {}}))

    def validate(self, obj: JSON) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        kind = spec.get("type") or "ClusterIP"
        if kind not in SERVICE_TYPES:
            allowed = ", ".join(go_quote(t) for t in SERVICE_TYPES)
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f"Unsupported value: {go_quote(str(kind))}: supported values: {allowed}",
                    "spec.type",
                )
            )
        ports = spec.get("ports") or []
        headless = spec.get("clusterIP") == "None"
        if kind != "ExternalName" and not ports and not headless:
            causes.append(Cause("FieldValueRequired", "Required value", "spec.ports"))
        if kind == "ExternalName" and not spec.get("externalName"):
            causes.append(Cause("FieldValueRequired", "Required value", "spec.externalName"))
        names: set[str] = set()
        for i, port in enumerate(ports):
            where = f"spec.ports[{i}]"
            if not isinstance(port, dict):
                continue
            name = port.get("name") or ""
            if len(ports) > 1 and not name:
                causes.append(Cause("FieldValueRequired", "Required value", f"{where}.name"))
            elif name and name in names:
                causes.append(
                    Cause(
                        "FieldValueDuplicate", f"Duplicate value: {go_quote(name)}", f"{where}.name"
                    )
                )
            names.add(name)
            number = port.get("port")
            if not isinstance(number, int) or not 1 <= number <= 65535:
                causes.append(
                    Cause(
                        "FieldValueInvalid",
                        f"Invalid value: {number}: must be between 1 and 65535, inclusive",
                        f"{where}.port",
                    )
                )
            protocol = port.get("protocol") or "TCP"
            if protocol not in PROTOCOLS:
                allowed = ", ".join(go_quote(p) for p in PROTOCOLS)
                causes.append(
                    Cause(
                        "FieldValueNotSupported",
                        f"Unsupported value: {go_quote(str(protocol))}: supported values: {allowed}",
                        f"{where}.protocol",
                    )
                )
        return causes

    def validate_update(self, new: JSON, old: JSON) -> list[Cause]:
        was = (old.get("spec") or {}).get("clusterIP")
        now = (new.get("spec") or {}).get("clusterIP")
        if (
            was
            and was != "None"
            and now != was
            and (new.get("spec") or {}).get("type") != "ExternalName"
        ):
            return [
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {go_quote(str(now or ''))}: field is immutable",
                    "spec.clusterIPs[0]",
                )
            ]
        return []

    def columns(self) -> list[Column]:
        return [
            NAME,
            Column("Type", description="type determines how the Service is exposed."),
            Column("Cluster-IP", description="clusterIP is the IP address of the service."),
            Column("External-IP", description="externalIPs is a list of IP addresses."),
            Column("Port(s)", description="The list of ports that are exposed by this service."),
            AGE,
            Column(
                "Selector",
                priority=1,
                description="Route service traffic to pods with label keys and values matching this selector.",
            ),
        ]

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        ips = spec.get("clusterIPs") or []
        ports = []
        for p in spec.get("ports") or []:
            text = f"{p.get('port')}/{p.get('protocol', 'TCP')}"
            if p.get("nodePort"):
                text = f"{p.get('port')}:{p.get('nodePort')}/{p.get('protocol', 'TCP')}"
            ports.append(text)
        external = ",".join(spec.get("externalIPs") or []) or (
            "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"
        )
        if spec.get("type") == "ExternalName":
            external = spec.get("externalName", "<none>")
        selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
        return [
            meta.get("name", ""),
            spec.get("type", ""),
            ips[0] if ips else "<none>",
            external,
            ",".join(ports) or "<none>",
            since(meta.get("creationTimestamp")),
            selector or "<none>",
        ]


def _hash(obj: Mapping[str, Any], salt: str) -> int:
    meta = obj.get("metadata") or {}
    raw = f"{meta.get('namespace', '')}/{meta.get('name', '')}/{salt}".encode()
    return int.from_bytes(hashlib.sha256(raw).digest()[:4], "big")


def _cluster_ip(obj: Mapping[str, Any]) -> str:
    """An address in 10.96.0.0/12 (the default service range), stable for a name."""
    n = _hash(obj, "ip") % (2**20 - 2) + 1
    return f"10.{96 + (n >> 16)}.{(n >> 8) & 255}.{n & 255}"


SERVICES = ResourceType(
    group="",
    plural="services",
    singular="service",
    kind="Service",
    list_kind="ServiceList",
    namespaced=True,
    versions=_v1(SERVICE_SCHEMA, status=True),
    short_names=("svc",),
    categories=("all",),
    strategy=ServiceStrategy(),
    verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
)


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
    versions=_v1(EVENT_SCHEMA),
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
    versions=_v1(EVENTS_V1_SCHEMA),
    short_names=("ev",),
    strategy=EventsV1Strategy(),
    stored_as=("", "events"),
)


# -- ingresses -----------------------------------------------------------------------------

_BACKEND = obj(
    {
        "service": obj({"name": STRING, "port": obj({"name": STRING, "number": INTEGER})}),
        "resource": OPEN,
    }
)
_PATH = obj({"path": STRING, "pathType": STRING, "backend": _BACKEND}, ["backend"])
INGRESS_SCHEMA = kind_schema(
    spec=obj(
        {
            "ingressClassName": STRING,
            "defaultBackend": _BACKEND,
            "tls": atomic_list(obj({"hosts": atomic_list(STRING), "secretName": STRING})),
            "rules": atomic_list(
                obj({"host": STRING, "http": obj({"paths": atomic_list(_PATH)}, ["paths"])})
            ),
        }
    ),
    status=obj({"loadBalancer": OPEN}),
)
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")


class IngressStrategy(Strategy):
    typed = True

    def prepare_create(self, obj: JSON) -> None:
        obj["status"] = {"loadBalancer": {}}

    def validate(self, obj: JSON) -> list[Cause]:
        causes: list[Cause] = []
        spec = obj.get("spec") or {}
        if not spec.get("defaultBackend") and not spec.get("rules"):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    "Invalid value: []networking.IngressRule(nil): either `defaultBackend` or "
                    "`rules` must be specified",
                    "spec.rules",
                )
            )
        for i, rule in enumerate(spec.get("rules") or []):
            for j, path in enumerate(((rule or {}).get("http") or {}).get("paths") or []):
                kind = (path or {}).get("pathType")
                where = f"spec.rules[{i}].http.paths[{j}].pathType"
                if not kind:
                    causes.append(
                        Cause(
                            "FieldValueRequired",
                            "Required value: pathType must be specified",
                            where,
                        )
                    )
                elif kind not in PATH_TYPES:
                    allowed = ", ".join(go_quote(p) for p in PATH_TYPES)
                    causes.append(
                        Cause(
                            "FieldValueNotSupported",
                            f"Unsupported value: {go_quote(str(kind))}: supported values: {allowed}",
                            where,
                        )
                    )
        return causes

    def columns(self) -> list[Column]:
        return [
            NAME,
            Column("Class", description="The name of the IngressClass resource that should be used for additional configuration"),
            Column("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
            Column("Address", description="Address is a list containing ingress points for the load-balancer"),
            Column("Ports", description="Ports of TLS configurations that open"),
            AGE,
        ]  # fmt: skip

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        hosts = [r.get("host") for r in spec.get("rules") or [] if r.get("host")]
        shown = ",".join(hosts[:4]) + (f" + {len(hosts) - 4} more..." if len(hosts) > 4 else "")
        ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        address = ",".join(i.get("ip") or i.get("hostname") or "" for i in ingress)
        return [
            meta.get("name", ""),
            spec.get("ingressClassName") or "<none>",
            shown or "*",
            address,
            "80, 443" if spec.get("tls") else "80",
            since(meta.get("creationTimestamp")),
        ]


INGRESSES = ResourceType(
    group="networking.k8s.io",
    plural="ingresses",
    singular="ingress",
    kind="Ingress",
    list_kind="IngressList",
    namespaced=True,
    versions=_v1(INGRESS_SCHEMA, status=True),
    short_names=("ing",),
    strategy=IngressStrategy(),
)

#: Every built-in kind served besides pods, in discovery order.
CORE_KINDS = (
    CONFIGMAPS,
    EVENTS,
    NAMESPACES,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
    EVENTS_V1,
    INGRESSES,
)
