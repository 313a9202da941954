"""Where a Ray cluster's dashboard can be reached from outside the cluster.

Why: KubeRay exposes the dashboard only on the head Service; how it gets out depends on the
platform: an OpenShift Route, an Ingress, or a Gateway API HTTPRoute, made by an admin, by an
operator or by hand. So we look for any of the three that sends traffic to the head Service's
dashboard port, and when there is none we say so, with the `kubectl port-forward` that works
everywhere. These kinds are read through the official client's generic custom-objects API
(the same URL layout serves built-in Ingress and the two CRDs), so flarekit needs no models
for them; a kind the cluster does not serve is simply skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flarekit._errors import Forbidden, Operation, error_from_response, unavailable

if TYPE_CHECKING:
    from flarekit._client import Client

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


EXPOSING_KINDS = (
    ExposedKind("Route", "route.openshift.io", "v1", "routes"),
    ExposedKind("Ingress", "networking.k8s.io", "v1", "ingresses"),
    ExposedKind("HTTPRoute", "gateway.networking.k8s.io", "v1", "httproutes"),
)


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


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _port_matches(port: Any, number: int, names: tuple[str, ...]) -> bool:
    """A port reference (number or name) that means the dashboard port; None means any."""
    if port is None:
        return True
    if isinstance(port, int) and not isinstance(port, bool):
        return port == number
    text = str(port)
    return text in names or text == str(number)


def _path(value: Any) -> str:
    text = str(value or "")
    return "" if text in ("", "/") else text if text.startswith("/") else "/" + text


def _route_uri(
    obj: Mapping[str, Any], service: str, port: int, names: tuple[str, ...]
) -> str | None:
    spec = _map(obj.get("spec"))
    to = _map(spec.get("to"))
    if to.get("kind", "Service") != "Service" or to.get("name") != service:
        return None
    if not _port_matches(_map(spec.get("port")).get("targetPort"), port, names):
        return None
    host = spec.get("host") or next(
        (i.get("host") for i in map(_map, _list(_map(obj.get("status")).get("ingress")))), None
    )
    if not host:
        return None
    scheme = "https" if spec.get("tls") else "http"
    return f"{scheme}://{host}{_path(spec.get('path'))}"


def _ingress_backend_matches(
    backend: Mapping[str, Any], service: str, port: int, names: tuple[str, ...]
) -> bool:
    svc = _map(backend.get("service"))
    if svc.get("name") != service:
        return False
    ref = _map(svc.get("port"))
    return _port_matches(ref.get("number", ref.get("name")), port, names)


def _ingress_uri(
    obj: Mapping[str, Any], service: str, port: int, names: tuple[str, ...]
) -> str | None:
    spec = _map(obj.get("spec"))
    tls_hosts = {h for t in map(_map, _list(spec.get("tls"))) for h in _list(t.get("hosts"))}
    balancer = [
        i.get("hostname") or i.get("ip")
        for i in map(_map, _list(_map(_map(obj.get("status")).get("loadBalancer")).get("ingress")))
    ]
    fallback_host = next((h for h in balancer if h), None)
    for rule in map(_map, _list(spec.get("rules"))):
        for path in map(_map, _list(_map(rule.get("http")).get("paths"))):
            if _ingress_backend_matches(_map(path.get("backend")), service, port, names):
                host = rule.get("host") or fallback_host
                if host:
                    scheme = (
                        "https"
                        if rule.get("host") in tls_hosts or (not rule.get("host") and tls_hosts)
                        else "http"
                    )
                    return f"{scheme}://{host}{_path(path.get('path'))}"
    default = _map(spec.get("defaultBackend"))
    if default and fallback_host and _ingress_backend_matches(default, service, port, names):
        return f"{'https' if tls_hosts else 'http'}://{fallback_host}"
    return None


def _httproute_uri(
    obj: Mapping[str, Any], service: str, port: int, names: tuple[str, ...]
) -> str | None:
    """The URL without its scheme (`//host/path`); the scheme comes from the Gateway."""
    spec = _map(obj.get("spec"))
    hosts = [str(h) for h in _list(spec.get("hostnames")) if h and "*" not in str(h)]
    if not hosts:
        return None
    for rule in map(_map, _list(spec.get("rules"))):
        for ref in map(_map, _list(rule.get("backendRefs"))):
            if ref.get("kind", "Service") != "Service" or ref.get("group", "") not in ("", "core"):
                continue
            if ref.get("name") != service or not _port_matches(ref.get("port"), port, ()):
                continue
            prefix = next(
                (
                    _map(m.get("path")).get("value")
                    for m in map(_map, _list(rule.get("matches")))
                    if _map(m.get("path")).get("value")
                ),
                None,
            )
            return f"//{hosts[0]}{_path(prefix)}"
    return None


def _gateway_scheme(client: Client, route: Mapping[str, Any], namespace: str) -> str:
    """`https` when a parent Gateway listener the route attaches to speaks HTTPS, else `http`.

    A Gateway we cannot read counts as plain HTTP.
    """
    for parent in map(_map, _list(_map(route.get("spec")).get("parentRefs"))):
        if parent.get("kind", "Gateway") != "Gateway":
            continue
        gateway = _get_object(
            client, "gateway.networking.k8s.io", "v1", "gateways",
            str(parent.get("namespace") or namespace), str(parent.get("name") or ""),
        )  # fmt: skip
        section = parent.get("sectionName")
        for listener in map(_map, _list(_map(_map(gateway).get("spec")).get("listeners"))):
            if section and listener.get("name") != section:
                continue
            if str(listener.get("protocol", "")).upper() == "HTTPS":
                return "https"
    return "http"


_READERS = {
    "Route": _route_uri,
    "Ingress": _ingress_uri,
    "HTTPRoute": _httproute_uri,
}


def _call(client: Client, operation: Operation, call: Callable[[Any], Any]) -> Any:
    """Run `call(CustomObjectsApi)`; None when the server answers 404 (kind not served or
    object missing); other failures as flarekit errors."""
    from kubernetes.client import CustomObjectsApi
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        return call(CustomObjectsApi(client.api_client))
    except ApiException as exc:
        if exc.status == 404:
            return None
        data = exc.body if isinstance(exc.body, bytes) else str(exc.body or "").encode()
        raise error_from_response(operation, int(exc.status or 0), data, None) from None
    except (HTTPError, OSError) as exc:
        why = f"cannot reach the API server: {exc}"
        raise unavailable(operation, type(exc).__name__, why) from exc


def _list_objects(client: Client, kind: ExposedKind, namespace: str) -> list[dict[str, Any]] | None:
    """Objects of `kind` in `namespace`, sorted by name; None when the kind is not served."""
    answer = _call(
        client,
        Operation("list", f"{kind.plural}.{kind.group}", "", namespace),
        lambda api: api.list_namespaced_custom_object(
            kind.group, kind.version, namespace, kind.plural, _request_timeout=30
        ),
    )
    if answer is None:
        return None
    items = [_map(item) for item in _list(_map(answer).get("items"))]
    return sorted(items, key=lambda o: str(_map(o.get("metadata")).get("name")))


def _get_object(
    client: Client, group: str, version: str, plural: str, namespace: str, name: str
) -> dict[str, Any] | None:
    if not name:
        return None
    try:
        answer = _call(
            client,
            Operation("get", f"{plural}.{group}", name, namespace),
            lambda api: api.get_namespaced_custom_object(
                group, version, namespace, plural, name, _request_timeout=30
            ),
        )
    except Forbidden:
        return None
    return _map(answer) if answer is not None else None


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
            uri = _READERS[kind.kind](obj, service, port, port_names)
            if uri and uri.startswith("//"):
                uri = _gateway_scheme(client, obj, namespace) + ":" + uri
            if uri:
                return uri
    raise DashboardNotExposed(namespace, service, port, notes)
