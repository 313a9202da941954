"""Services and Ingresses: how traffic reaches pods, as kube-apiserver's strategies store them.

Services get their type, session affinity, a stable cluster IP from 10.96.0.0/12, defaulted
ports (protocol, target port, node ports) and the checks users trip over (ports required,
names when there are several, port range, protocols), with RFC 1123 label names. Ingresses
need path types; they get a generation and an empty load balancer status.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._names import go_quote
from flarekit_testing.apiserver._resources import ResourceType
from flarekit_testing.apiserver._schema_shapes import (
    BOOLEAN,
    INT_OR_STRING,
    INTEGER,
    OPEN,
    STRING,
    atomic_list,
    keyed_list,
    kind_schema,
    map_of,
    obj,
    v1_versions,
)
from flarekit_testing.apiserver._strategy import Column, Strategy
from flarekit_testing.apiserver._tables import AGE, NAME, since

JSON = dict[str, Any]


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

    def default(self, obj: JSON) -> None:
        """`SetDefaults_Service`: type, session affinity, port protocols and target ports,
        traffic policies."""
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
        spec.setdefault("internalTrafficPolicy", "Cluster")
        if kind == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)

    def zero(self) -> JSON:
        return {"spec": {}, "status": {"loadBalancer": {}}}

    def prepare_create(self, obj: JSON) -> None:
        """What the service registry allocates: node ports, cluster IPs and their families."""
        spec = obj.setdefault("spec", {})
        kind = spec.get("type", "ClusterIP")
        if kind == "ExternalName":
            return
        if kind in ("NodePort", "LoadBalancer"):
            for i, port in enumerate(spec.get("ports") or []):
                if isinstance(port, dict):
                    port.setdefault("nodePort", 30000 + _hash(obj, str(i)) % 2768)
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
    versions=v1_versions(SERVICE_SCHEMA, status=True),
    short_names=("svc",),
    categories=("all",),
    strategy=ServiceStrategy(),
    verbs=("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"),
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

    def zero(self) -> JSON:
        return {"spec": {}, "status": {"loadBalancer": {}}}

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
    versions=v1_versions(INGRESS_SCHEMA, status=True),
    short_names=("ing",),
    strategy=IngressStrategy(),
)
