"""The Ray dashboard through the API server: its proxy to the head Service.

Why: a dashboard that no Route, Ingress or HTTPRoute exposes is still reachable by anyone
who may `get services/proxy` in the cluster's namespace, as `kubectl proxy` users reach it:
the API server forwards each request to the head Service's dashboard port, inside the
cluster. So a `RayJobClient` is pointed at
``<server>/api/v1/namespaces/<ns>/services/<head service>:<port>/proxy`` with the `Client`'s
own credentials (its bearer token or client certificate) and the CA it trusts, read from the
official client's configuration that the `Client` carries. A token that expires (exec
plugins, OIDC) is read when the `RayJobClient` is made: make a new one for a long session.
"""

from __future__ import annotations

import ssl
import urllib.parse
from typing import TYPE_CHECKING, Any

import flarekit.ray

if TYPE_CHECKING:
    from flarekit.client import Client

__all__ = ["proxy_address", "through_api_server"]


def proxy_address(server: str, namespace: str, service: str, port: int) -> str:
    """The API server's proxy URL of `service`'s `port` in `namespace`."""
    quote = urllib.parse.quote
    return (
        f"{server.rstrip('/')}/api/v1/namespaces/{quote(namespace, safe='')}/services/"
        f"{quote(service, safe='')}:{port}/proxy"
    )


def _tls(configuration: Any) -> ssl.SSLContext:
    """The API server's TLS as the official client's configuration sets it up."""
    context = (
        ssl.create_default_context(cafile=configuration.ssl_ca_cert)
        if configuration.ssl_ca_cert
        else ssl.create_default_context()
    )
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


def _authorization(client: Client) -> str | None:
    """The `Authorization` header the client sends (refreshed as its requests refresh it)."""
    headers: dict[str, str] = {}
    client.api_client.update_params_for_auth(headers, [], ["BearerToken"])
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return f"Bearer {token}" if scheme.lower() == "bearer" else value


def through_api_server(
    client: Client,
    namespace: str,
    service: str,
    port: int,
    *,
    timeout: float = 30.0,
    retries: int = 3,
) -> flarekit.ray.RayJobClient:
    """A `RayJobClient` of the dashboard behind `service:port`, through the API server."""
    configuration = client.api_client.configuration
    authorization = _authorization(client)
    return flarekit.ray.RayJobClient(
        proxy_address(client.server, namespace, service, port),
        headers={"Authorization": authorization} if authorization else None,
        verify=_tls(configuration),
        timeout=timeout,
        retries=retries,
    )
