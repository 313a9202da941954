"""The built-in kinds every cluster serves and users' code touches, with their strategies.

Namespaces, ConfigMaps, Secrets and ServiceAccounts here; Services and Ingresses in
`_services`, Events (core and `events.k8s.io`, one storage) in `_events`. Each has a structural schema of its fields (list
types, keys and patch strategies included, so apply and strategic merge work on them), the
defaults kube-apiserver's defaulting and strategy set, the validation that matters to users'
code (names, immutable fields, Secret data as base64, config keys, service ports), the field
selectors the real server offers, and the columns `kubectl get` prints.

Pods, with their log subresource and kubelet-like states, are in `_pods`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._events import EVENTS, EVENTS_V1
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._names import go_quote
from flarekit_testing.apiserver._resources import ResourceType
from flarekit_testing.apiserver._schema_shapes import (
    BOOLEAN,
    BYTES,
    LOCAL_REFERENCE,
    OBJECT_REFERENCE,
    OPEN,
    STRING,
    STRING_MAP,
    atomic_list,
    kind_schema,
    map_of,
    merge_list,
    obj,
    v1_versions,
)
from flarekit_testing.apiserver._services import INGRESSES, SERVICES
from flarekit_testing.apiserver._strategy import Column, Strategy
from flarekit_testing.apiserver._tables import AGE, NAME, since

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

    def default(self, obj: JSON) -> None:
        name = obj["metadata"].get("name") or ""
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name

    def zero(self) -> JSON:
        return {"spec": {}, "status": {}}

    def prepare_create(self, obj: JSON) -> None:
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
    versions=v1_versions(NAMESPACE_SCHEMA, status=True),
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
    versions=v1_versions(CONFIGMAP_SCHEMA),
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

    def default(self, obj: JSON) -> None:
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
    versions=v1_versions(SECRET_SCHEMA),
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
    versions=v1_versions(SERVICEACCOUNT_SCHEMA),
    short_names=("sa",),
    strategy=ServiceAccountStrategy(),
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
