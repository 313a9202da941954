"""Where a Ray cluster's dashboard can be reached from outside the cluster.

Why: KubeRay exposes the dashboard only on the head Service; how it gets out depends on the
platform: an OpenShift Route, an Ingress, or a Gateway API HTTPRoute, made by an admin, by an
operator or by hand. So we look for any of the three that sends traffic to the head Service's
dashboard port, and when there is none we say so, with the `kubectl port-forward` that works
everywhere. Ingress is read as its generated model; Route, HTTPRoute and Gateway, whose CRDs
flarekit does not pin, as generic resources (typed metadata, the rest as the server sent it).
All go through the `Client`; a kind the cluster does not serve is simply skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import flarekit.client
from flarekit._objects import name_of
from flarekit.client import Forbidden, NotFound
from flarekit.cluster._endpoints import _routes as routes
from flarekit_models.networking import v1 as networking_v1

if TYPE_CHECKING:
    from flarekit.client import Client, GenericResource
    from flarekit_models import KubeResource
    from flarekit_models.networking.v1 import (
        Ingress,
        IngressBackend,
        IngressLoadBalancerIngress,
    )

__all__ = [
    "DEFAULT_DASHBOARD_PORT",
    "EXPOSING_KINDS",
    "DashboardNotExposed",
    "ExposedKind",
    "find_dashboard_uri",
]

DEFAULT_DASHBOARD_PORT = 8265


@dataclass(frozen=True)
class ExposedKind:
    """A resource type that can route HTTP to a Service: where to list it."""

    kind: str
    group: str
    version: str
    plural: str

    def model(self) -> type[KubeResource]:
        if self.kind == "Ingress":
            return networking_v1.Ingress

        return flarekit.client.generic_resource(
            f"{self.group}/{self.version}", self.kind, self.plural
        )


EXPOSING_KINDS = (
    ExposedKind("Route", "route.openshift.io", "v1", "routes"),
    ExposedKind("Ingress", "networking.k8s.io", "v1", "ingresses"),
    ExposedKind("HTTPRoute", "gateway.networking.k8s.io", "v1", "httproutes"),
)
GATEWAY = ExposedKind("Gateway", "gateway.networking.k8s.io", "v1", "gateways")


class DashboardNotExposed(LookupError):
    """No Route, Ingress or HTTPRoute leads to the dashboard; the message says what to do."""

    def __init__(self, namespace: str, service: str, port: int, notes: list[str]) -> None:
        self.namespace = namespace
        self.service = service
        self.port = port
        looked = f" ({'; '.join(notes)})" if notes else ""
        super().__init__(
            f"no Route, Ingress or HTTPRoute in namespace {namespace!r} exposes the Ray "
            f"dashboard (Service {service!r}, port {port}){looked}. To reach it from this "
            f"machine, run `kubectl port-forward -n {namespace} svc/{service} {port}:{port}` "
            f"and open http://localhost:{port}"
        )


def _port_matches(port: int | str | None, number: int, names: tuple[str, ...]) -> bool:
    """A port reference (number or name) that means the dashboard port; None means any."""
    if port is None:
        return True
    if isinstance(port, int) and not isinstance(port, bool):
        return port == number
    text = str(port)
    return text in names or text == str(number)


def _path(value: str | None) -> str:
    text = str(value or "")
    return "" if text in ("", "/") else text if text.startswith("/") else "/" + text


def _route_uri(obj: GenericResource, service: str, port: int, names: tuple[str, ...]) -> str | None:
    spec = routes.part(routes.RouteSpec, obj, "spec")
    if spec is None:
        return None
    to = spec.to or routes.RouteTarget()
    if to.kind != "Service" or to.name != service:
        return None
    if not _port_matches(spec.port.target_port if spec.port else None, port, names):
        return None
    status = routes.part(routes.RouteStatus, obj, "status")
    admitted = (status.ingress or []) if status is not None else []
    host = spec.host or next((i.host for i in admitted), None)
    if not host:
        return None
    scheme = "https" if spec.tls is not None and spec.tls.to_dict() else "http"
    return f"{scheme}://{host}{_path(spec.path)}"


def _ingress_backend_matches(
    backend: IngressBackend | None, service: str, port: int, names: tuple[str, ...]
) -> bool:
    svc = backend.service if backend is not None else None
    if svc is None or svc.name != service:
        return False
    ref = svc.port
    number = ref.number if ref is not None else None
    return _port_matches(number if number is not None else (ref.name if ref else None), port, names)


def _balancer_address(entry: IngressLoadBalancerIngress) -> str:
    """A load balancer's address, with its port when it reports one other than HTTP's and
    HTTPS's (a local ingress on 127.0.0.1, for example)."""
    host = str(entry.hostname or entry.ip)
    ports = [p.port for p in entry.ports or () if p.port not in (80, 443) and not p.error]
    return f"{host}:{ports[0]}" if ports else host


def _ingress_uri(obj: Ingress, service: str, port: int, names: tuple[str, ...]) -> str | None:
    spec = obj.spec
    if spec is None:
        return None
    tls_hosts = {h for t in spec.tls or () for h in t.hosts or ()}
    balancer = obj.status.load_balancer if obj.status is not None else None
    addresses = (balancer.ingress or []) if balancer is not None else []
    fallback_host = next((_balancer_address(i) for i in addresses if i.hostname or i.ip), None)
    for rule in spec.rules or ():
        for path in rule.http.paths if rule.http is not None else ():
            if _ingress_backend_matches(path.backend, service, port, names):
                host = rule.host or fallback_host
                if host:
                    secure = rule.host in tls_hosts or (not rule.host and bool(tls_hosts))
                    return f"{'https' if secure else 'http'}://{host}{_path(path.path)}"
    default = spec.default_backend
    if default and fallback_host and _ingress_backend_matches(default, service, port, names):
        return f"{'https' if tls_hosts else 'http'}://{fallback_host}"
    return None


def _httproute_uri(
    obj: GenericResource, service: str, port: int, names: tuple[str, ...]
) -> str | None:
    """The URL without its scheme (`//host/path`); the scheme comes from the Gateway."""
    spec = routes.part(routes.HTTPRouteSpec, obj, "spec")
    hosts = [h for h in (spec.hostnames or []) if h and "*" not in h] if spec else []
    if spec is None or not hosts:
        return None
    for rule in spec.rules or ():
        for ref in rule.backend_refs or ():
            if ref.kind != "Service" or ref.group not in ("", "core"):
                continue
            if ref.name != service or not _port_matches(ref.port, port, ()):
                continue
            prefix = next(
                (m.path.value for m in rule.matches or () if m.path is not None and m.path.value),
                None,
            )
            return f"//{hosts[0]}{_path(prefix)}"
    return None


def _gateway_scheme(client: Client, route: GenericResource, namespace: str) -> str:
    """`https` when a parent Gateway listener the route attaches to speaks HTTPS, else `http`.

    A Gateway we cannot read counts as plain HTTP.
    """
    spec = routes.part(routes.HTTPRouteSpec, route, "spec")
    for parent in (spec.parent_refs or []) if spec is not None else []:
        if parent.kind != "Gateway":
            continue
        gateway = _get_object(client, GATEWAY, parent.namespace or namespace, parent.name or "")
        gateway_spec = routes.part(routes.GatewaySpec, gateway, "spec")
        for listener in (gateway_spec.listeners or []) if gateway_spec is not None else []:
            if parent.section_name and listener.name != parent.section_name:
                continue
            if listener.protocol.upper() == "HTTPS":
                return "https"
    return "http"


#: Readers of the kinds without a model.
_READERS = {"Route": _route_uri, "HTTPRoute": _httproute_uri}


def _list_objects(client: Client, kind: ExposedKind, namespace: str) -> list[KubeResource] | None:
    """Objects of `kind` in `namespace`, sorted by name; None when the kind is not served."""
    try:
        found = list(client.list(kind.model(), namespace=namespace))
    except NotFound:
        return None
    return sorted(found, key=name_of)


def _get_object(
    client: Client, kind: ExposedKind, namespace: str, name: str
) -> flarekit.client.GenericResource | None:
    """One object of a kind without a model; None when it is missing, not served or may not
    be read."""
    if not name:
        return None
    try:
        found = client.get(kind.model(), name, namespace=namespace)
    except (NotFound, Forbidden):
        return None

    return found if isinstance(found, flarekit.client.GenericResource) else None


def find_dashboard_uri(
    client: Client,
    namespace: str,
    service: str,
    *,
    port: int = DEFAULT_DASHBOARD_PORT,
    port_names: tuple[str, ...] = ("dashboard",),
) -> str:
    """The URL of the first Route, Ingress or HTTPRoute (in that order, each sorted by name)
    that routes to `service`'s dashboard port; `DashboardNotExposed` if none does.

    Kinds the cluster does not serve, or the user may not list (403), are named in the
    message rather than ending the search.
    """
    notes: list[str] = []
    for kind in EXPOSING_KINDS:
        try:
            objects = _list_objects(client, kind, namespace)
        except Forbidden:
            notes.append(f"not allowed to list {kind.plural}.{kind.group}")
            continue
        if objects is None:
            notes.append(f"the cluster does not serve {kind.kind} ({kind.group}/{kind.version})")
            continue
        for obj in objects:
            if isinstance(obj, networking_v1.Ingress):
                uri = _ingress_uri(obj, service, port, port_names)
            elif isinstance(obj, flarekit.client.GenericResource):
                uri = _READERS[kind.kind](obj, service, port, port_names)
                if uri and uri.startswith("//"):
                    uri = _gateway_scheme(client, obj, namespace) + ":" + uri
            else:
                uri = None
            if uri:
                return uri
    raise DashboardNotExposed(namespace, service, port, notes)
