"""Where a Ray client (`ray.init("ray://...")`) connects to, read from the cluster.

Why: `Cluster.cluster_uri()` composes the in-cluster address from KubeRay's naming and works
before the cluster exists; a user about to call `ray.init` wants an address that leads
somewhere. So :func:`local_client_url` reads what is there: the RayCluster (its head Service's
name as KubeRay reports it), the head Service itself and its ``client`` port, and any Route,
Ingress or HTTPRoute that exposes that port outside the cluster (codeflare-sdk's
`local_client_url()` looks for the same). Each missing piece is an error saying which, and
why it may be missing. Every read goes through the `Client`. When nothing exposes the port,
`Cluster.local_client_url()` forwards a local port to the head pod (see `_forward`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import flarekit.client
from flarekit.client import NotFound
from flarekit.cluster._endpoints._dashboard import DashboardNotExposed, find_dashboard_uri
from flarekit.cluster._endpoints._routes import part
from flarekit.cluster._status import head_service_name
from flarekit_models.core import v1 as core_v1
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models.core.v1 import ServicePort

__all__ = [
    "CLIENT_PORT",
    "CLIENT_PORT_NAME",
    "ClientAddress",
    "RayClientUnavailable",
    "client_address",
]

#: The Ray client server port on the head Service, and the name KubeRay gives it.
CLIENT_PORT = 10001
CLIENT_PORT_NAME = "client"


class RayClientUnavailable(LookupError):
    """The cluster exists but offers no Ray client address (yet): no head Service, or one
    without a client port. The message says which and what to do."""

    def __init__(self, namespace: str, cluster: str, service: str, why: str) -> None:
        self.namespace = namespace
        self.cluster = cluster
        self.service = service
        super().__init__(f"Ray cluster {namespace}/{cluster} has no Ray client address: {why}")


def _client_port(
    ports: list[ServicePort], namespace: str, cluster: str, service: str
) -> ServicePort:
    """The Service port named ``client`` (KubeRay's name), else the one numbered 10001."""
    for port in ports:
        if port.name == CLIENT_PORT_NAME:
            return port
    for port in ports:
        if port.port == CLIENT_PORT:
            return port
    listed = ", ".join(f"{p.name or '<unnamed>'}={p.port}" for p in ports) or "none"
    raise RayClientUnavailable(
        namespace,
        cluster,
        service,
        f"its head Service {service!r} has no port named {CLIENT_PORT_NAME!r} or numbered "
        f"{CLIENT_PORT} (ports: {listed}); the Ray client server may be turned off in the "
        "head group's rayStartParams",
    )


def _exposed_host(client: Client, namespace: str, service: str, port: int) -> str | None:
    """The host of a Route, Ingress or HTTPRoute that sends traffic to the client port."""
    try:
        uri = find_dashboard_uri(
            client, namespace, service, port=port, port_names=(CLIENT_PORT_NAME,)
        )
    except DashboardNotExposed:
        return None
    return urlsplit(uri).hostname


@dataclass(frozen=True)
class ClientAddress:
    """Where a cluster's Ray client server is: the head Service and its client port, and the
    host of what exposes that port outside the cluster (None: nothing does)."""

    namespace: str
    service: str
    port: ServicePort
    exposed_host: str | None

    @property
    def in_cluster(self) -> str:
        return f"ray://{self.service}.{self.namespace}.svc:{self.port.port}"


def client_address(client: Client, namespace: str, cluster: str) -> ClientAddress:
    """Read where `cluster`'s Ray client server is.

    Raises `NotFound` when the RayCluster does not exist and :class:`RayClientUnavailable`
    when its head Service does not exist (yet) or has no client port.
    """
    try:
        raycluster = client.get(ray_v1.RayCluster, cluster, namespace=namespace)
    except NotFound as exc:
        exc.add_note(
            f"Ray cluster {namespace}/{cluster} does not exist: apply() it first (a wrapped "
            "cluster's RayCluster exists once its AppWrapper is admitted)"
        )
        raise
    service = head_service_name(raycluster, cluster)
    kind = flarekit.client.generic_resource("v1", "Service", "services")
    try:
        found = client.get(kind, service, namespace=namespace)
    except NotFound:
        raise RayClientUnavailable(
            namespace,
            cluster,
            service,
            f"its head Service {service!r} does not exist (yet): KubeRay creates it when it "
            "starts the cluster's head (wait_ready() waits for that)",
        ) from None
    spec = part(core_v1.ServiceSpec, found, "spec")
    port = _client_port(list(spec.ports or []) if spec else [], namespace, cluster, service)
    host = _exposed_host(client, namespace, service, port.port)
    return ClientAddress(namespace, service, port, host or None)
