"""The head Service simulated KubeRay makes for every RayCluster, as KubeRay v1.4 makes it.

Why: clients find a Ray cluster through its head Service (`local_client_url()`, the
dashboard's Ingress or Route, `ray://<service>.<namespace>.svc:10001`), and KubeRay's status
names it. KubeRay v1.4 creates it before the head pod: named ``<cluster>-head-svc`` (or
``spec.headGroupSpec.headService.metadata.name``), headless (``clusterIP: None``, not-ready
addresses published) unless the head group asks for another service type, selecting the
head pod by KubeRay's labels, owned by the cluster, with one port per named port of the head
container (an unnamed port is ``<port>-port``) or, when the container lists none, KubeRay's
defaults (client 10001, dashboard 8265, gcs-server 6379, metrics 8080, serve 8000), always
with a metrics port, each with ``appProtocol: tcp``, sorted by name. `status.endpoints` is
read from it, port by port.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import ApiError

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

__all__ = ["endpoints", "ensure_head_service", "head_service", "head_service_name"]

JSON = dict[str, Any]
DEFAULT_PORTS = {"client": 10001, "dashboard": 8265, "gcs-server": 6379, "metrics": 8080}
SERVE_PORT = ("serve", 8000)
METRICS_PORT = ("metrics", 8080)


def head_service_name(cluster: Mapping[str, Any]) -> str:
    spec = cluster.get("spec") or {}
    custom = ((spec.get("headGroupSpec") or {}).get("headService") or {}).get("metadata") or {}
    return str(custom.get("name") or f"{cluster['metadata']['name']}-head-svc")


def _ports(cluster: Mapping[str, Any]) -> dict[str, int]:
    template = ((cluster.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}
    containers = (template.get("spec") or {}).get("containers") or [{}]
    ports: dict[str, int] = {}
    for port in containers[0].get("ports") or []:
        number = int(port.get("containerPort") or 0)
        ports[str(port.get("name") or f"{number}-port")] = number
    if not ports:
        ports = {**DEFAULT_PORTS, SERVE_PORT[0]: SERVE_PORT[1]}
    ports.setdefault(*METRICS_PORT)
    return ports


def selector(cluster: Mapping[str, Any]) -> dict[str, str]:
    """The head pod's labels KubeRay selects it by (and labels the Service with)."""
    name = str(cluster["metadata"]["name"])
    template = ((cluster.get("spec") or {}).get("headGroupSpec") or {}).get("template") or {}
    app = ((template.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/name")
    return {
        "ray.io/cluster": name,
        "ray.io/node-type": "head",
        "ray.io/identifier": f"{name}-head",
        "app.kubernetes.io/name": str(app or "kuberay"),
        "app.kubernetes.io/created-by": "kuberay-operator",
    }


def head_service(cluster: Mapping[str, Any]) -> JSON:
    """The Service KubeRay v1.4 creates for the cluster's head."""
    meta, spec = cluster["metadata"], cluster.get("spec") or {}
    head = spec.get("headGroupSpec") or {}
    custom = head.get("headService") or {}
    service_type = head.get("serviceType")
    ports = [
        {"name": name, "port": number, "appProtocol": "tcp"}
        for name, number in sorted(_ports(cluster).items())
    ]
    body: JSON = {"selector": selector(cluster), "ports": ports}
    if service_type:
        body["type"] = service_type
    if not custom and service_type in (None, "", "ClusterIP"):
        body.update(clusterIP="None", publishNotReadyAddresses=True)
    if custom:
        body = {**(custom.get("spec") or {}), **body}
        body["ports"] = [*((custom.get("spec") or {}).get("ports") or []), *ports]
    annotations = {
        **((custom.get("metadata") or {}).get("annotations") or {}),
        **(spec.get("headServiceAnnotations") or {}),
    }
    service_meta: JSON = {
        "name": head_service_name(cluster),
        "namespace": meta.get("namespace"),
        "labels": {**((custom.get("metadata") or {}).get("labels") or {}), **selector(cluster)},
        "ownerReferences": [
            {
                "apiVersion": cluster["apiVersion"],
                "kind": "RayCluster",
                "name": meta["name"],
                "uid": meta["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if annotations:
        service_meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Service", "metadata": service_meta, "spec": body}


def ensure_head_service(cluster_api: FakeCluster, cluster: Mapping[str, Any]) -> JSON | None:
    """The cluster's head Service, created when missing (None if it cannot be made)."""
    wanted = head_service(cluster)
    meta = wanted["metadata"]
    found = cluster_api.get("services", meta["name"], meta["namespace"])
    if found is not None:
        return found
    try:
        return cluster_api.create(wanted, field_manager="kuberay-operator")
    except ApiError as exc:
        if exc.code == 409:
            return cluster_api.get("services", meta["name"], meta["namespace"])
        if exc.code == 404:  # the namespace is going away
            return None
        raise


def endpoints(service: Mapping[str, Any] | None) -> dict[str, str]:
    """`status.endpoints` as KubeRay reads it from the head Service: each named port's node
    port, else its target port."""
    out: dict[str, str] = {}
    for port in ((service or {}).get("spec") or {}).get("ports") or []:
        if not port.get("name"):
            continue
        if port.get("nodePort"):
            out[str(port["name"])] = str(port["nodePort"])
        elif port.get("targetPort") not in (None, "", 0):
            out[str(port["name"])] = str(port["targetPort"])
    return out
