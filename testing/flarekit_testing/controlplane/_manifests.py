"""Reading an operator's upstream install manifests, and the few changes a local process needs.

`make control-plane` renders each operator release's upstream install (its kustomization, as
`kubectl apply -k` would install it) into the operator's build folder. This module reads that
stream and answers what the control plane needs to run the operator as a local process instead
of a Deployment: which container is the operator and with which arguments and environment,
which ServiceAccount it runs as, where its readiness probe is, which port of the operator a
Service port leads to; and it rewrites what points at in-cluster Services so that it points at
the operator's local port instead (webhook `clientConfig.service` becomes `clientConfig.url`
on 127.0.0.1 with the local CA bundle; the same for CRD conversion webhooks).
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

JSON = dict[str, Any]

WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
#: Kinds of the upstream install the control plane does not create, and why (see
#: docs/operators.md): the operator runs as a local process, not as this Deployment; the
#: Services' role is played by the local URLs; the CRDs come from the pinned releases (their
#: conversion webhook is taken from here); an APIService needs a Service the API server can
#: reach, which has no endpoints here.
NOT_CREATED = ("Deployment", "Service", "CustomResourceDefinition", "APIService")


class ManifestError(RuntimeError):
    """The rendered upstream manifests lack something the control plane needs."""


def load(path: Path) -> list[JSON]:
    """The objects of a rendered install, in order.

    The installs are megabytes of YAML (their CRDs included), which take PyYAML many seconds
    to read: the objects are kept beside the file as JSON, named by the YAML's digest, and read
    from there the next time (a second instead of half a minute on a busy machine).
    """
    text = path.read_text()
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    parsed = path.with_name(f"{path.stem}.{digest}.json")
    with contextlib.suppress(OSError, ValueError):
        return list(json.loads(parsed.read_text()))
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML has it
    objects = [d for d in yaml.load_all(text, Loader=loader) if isinstance(d, dict) and d]
    # A read-only build folder, or values JSON cannot hold (timestamps): read the YAML each time.
    with contextlib.suppress(OSError, TypeError):
        staging = parsed.with_name(f"{parsed.name}.{os.getpid()}.tmp")
        staging.write_text(json.dumps(objects))
        staging.replace(parsed)
    return objects


def of_kind(objects: Iterable[JSON], *kinds: str) -> list[JSON]:
    return [o for o in objects if o.get("kind") in kinds]


def named(objects: Iterable[JSON], kind: str, name: str) -> JSON | None:
    for obj in objects:
        if obj.get("kind") == kind and (obj.get("metadata") or {}).get("name") == name:
            return obj
    return None


@dataclass(frozen=True)
class Workload:
    """The operator's Deployment, as far as a local process needs it."""

    namespace: str
    name: str
    service_account: str
    container: JSON
    volumes: list[JSON]

    @property
    def user(self) -> str:
        """The user name the API server gives the pod's ServiceAccount token."""
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"

    @property
    def groups(self) -> tuple[str, ...]:
        return ("system:serviceaccounts", f"system:serviceaccounts:{self.namespace}")

    def port(self, port: int | str) -> int:
        """A container port by number or by name."""
        if isinstance(port, int) or str(port).isdigit():
            return int(port)
        for entry in self.container.get("ports") or []:
            if entry.get("name") == port:
                return int(entry["containerPort"])
        raise ManifestError(f"container {self.container.get('name')} has no port named {port}")

    def readiness(self) -> tuple[int, str] | None:
        """The port and path of the container's HTTP readiness probe."""
        probe = (self.container.get("readinessProbe") or {}).get("httpGet")
        if not probe:
            return None
        return self.port(probe["port"]), str(probe.get("path") or "/")

    def secret_mount(self, secret: str) -> str | None:
        """Where the container mounts Secret `secret` (None if it does not)."""
        volumes = {
            str(v["name"])
            for v in self.volumes
            if (v.get("secret") or {}).get("secretName") == secret
        }
        for mount in self.container.get("volumeMounts") or []:
            if mount.get("name") in volumes and not mount.get("subPath"):
                return str(mount["mountPath"])
        return None

    def args(self) -> list[str]:
        return [str(a) for a in self.container.get("args") or []]

    def env(self) -> dict[str, str]:
        """The container's environment, with the downward API's namespace and pod name filled
        in (`<deployment>-local` stands for the pod name)."""
        out: dict[str, str] = {}
        for entry in self.container.get("env") or []:
            if "value" in entry:
                out[entry["name"]] = str(entry["value"])
                continue
            field = ((entry.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            if field == "metadata.namespace":
                out[entry["name"]] = self.namespace
            elif field == "metadata.name":
                out[entry["name"]] = f"{self.name}-local"
        return out


def workload(objects: list[JSON]) -> Workload:
    """The operator's Deployment and its operator container (`manager`, else the first)."""
    deployments = of_kind(objects, "Deployment")
    if len(deployments) != 1:
        raise ManifestError(f"expected one Deployment in the install, found {len(deployments)}")
    deployment = deployments[0]
    spec = deployment["spec"]["template"]["spec"]
    containers = spec["containers"]
    container = next((c for c in containers if c.get("name") == "manager"), containers[0])
    meta = deployment["metadata"]
    return Workload(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        service_account=str(spec.get("serviceAccountName") or "default"),
        container=container,
        volumes=list(spec.get("volumes") or []),
    )


def service_target(objects: list[JSON], load_: Workload, ref: Mapping[str, Any]) -> int:
    """The operator's port behind a `service` reference (name, namespace, port)."""
    service = named(objects, "Service", str(ref["name"]))
    if service is None:
        raise ManifestError(f"the install has no Service {ref['name']}")
    wanted = int(ref.get("port") or 443)
    for entry in service["spec"].get("ports") or []:
        if int(entry["port"]) == wanted:
            return load_.port(entry.get("targetPort", entry["port"]))
    raise ManifestError(f"Service {ref['name']} has no port {wanted}")


def _local(ref: Mapping[str, Any], host_port: int, ca_pem: bytes) -> JSON:
    path = str(ref.get("path") or "/")
    return {
        "url": f"https://127.0.0.1:{host_port}{path}",
        "caBundle": base64.b64encode(ca_pem).decode("ascii"),
    }


def local_webhooks(config: JSON, host_port_of: Mapping[str, int], ca_pem: bytes) -> JSON:
    """A webhook configuration whose webhooks call the operator on 127.0.0.1 (`host_port_of`:
    the local port for each Service name) and trust `ca_pem`; cert-manager's CA-injection
    annotation is dropped (there is no cert-manager)."""
    out = copy.deepcopy(config)
    annotations = (out.get("metadata") or {}).get("annotations") or {}
    annotations.pop("cert-manager.io/inject-ca-from", None)
    for hook in out.get("webhooks") or []:
        ref = (hook.get("clientConfig") or {}).get("service")
        if ref is not None:
            hook["clientConfig"] = _local(ref, host_port_of[str(ref["name"])], ca_pem)
    return out


def conversions(
    objects: list[JSON], host_port_of: Mapping[str, int], ca_pem: bytes
) -> dict[str, JSON]:
    """CRD name -> the install's conversion webhook, calling the operator on 127.0.0.1."""
    out: dict[str, JSON] = {}
    for crd in of_kind(objects, "CustomResourceDefinition"):
        conversion = copy.deepcopy(crd["spec"].get("conversion") or {})
        ref = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if conversion.get("strategy") != "Webhook" or ref is None:
            continue
        conversion["webhook"]["clientConfig"] = _local(ref, host_port_of[str(ref["name"])], ca_pem)
        out[str(crd["metadata"]["name"])] = conversion
    return out


def service_refs(objects: list[JSON]) -> list[JSON]:
    """Every Service reference of the install's webhooks and conversion webhooks."""
    refs = []
    for config in of_kind(objects, *WEBHOOK_KINDS):
        for hook in config.get("webhooks") or []:
            ref = (hook.get("clientConfig") or {}).get("service")
            if ref is not None:
                refs.append(ref)
    for crd in of_kind(objects, "CustomResourceDefinition"):
        conversion = crd["spec"].get("conversion") or {}
        ref = ((conversion.get("webhook") or {}).get("clientConfig") or {}).get("service")
        if conversion.get("strategy") == "Webhook" and ref is not None:
            refs.append(ref)
    return refs


def config_document(objects: list[JSON], name: str) -> tuple[str, JSON]:
    """The single key and parsed YAML document of the ConfigMap `name`."""
    config_map = named(objects, "ConfigMap", name)
    if config_map is None:
        raise ManifestError(f"the install has no ConfigMap {name}")
    data = config_map.get("data") or {}
    if len(data) != 1:
        raise ManifestError(f"ConfigMap {name} holds {len(data)} files, expected one")
    [(key, text)] = data.items()
    document = yaml.safe_load(text) or {}
    if not isinstance(document, dict):
        raise ManifestError(f"ConfigMap {name}: {key} is not a YAML mapping")
    return str(key), document


def with_config(objects: list[JSON], name: str, key: str, document: JSON) -> list[JSON]:
    """The objects, with ConfigMap `name` holding `document` under `key`."""
    out = []
    for obj in objects:
        if obj.get("kind") == "ConfigMap" and obj["metadata"].get("name") == name:
            obj = {**obj, "data": {key: yaml.safe_dump(document, sort_keys=False)}}
        out.append(obj)
    return out
