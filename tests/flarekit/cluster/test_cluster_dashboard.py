"""The dashboard URL from a Route, an Ingress or an HTTPRoute, and the message without one.

Ingress is built into FakeCluster as into real clusters; Route, HTTPRoute and Gateway are
custom resources, given here as tiny hand-written CRDs. flarekit reads all of them through
the same `/apis/<group>/<version>/namespaces/<ns>/<plural>` URLs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from facade_support import TICK

from flarekit import Client, Forbidden
from flarekit.cluster import Cluster, ClusterConfiguration, DashboardNotExposed
from flarekit.cluster._endpoints import find_dashboard_uri
from flarekit_models._crds import crds_for
from flarekit_testing import FakeCluster, RayClusterController
from kube_support import client_for

OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def open_crd(group: str, version: str, kind: str, plural: str) -> dict[str, Any]:
    """A namespaced CRD that accepts any spec and status."""
    schema = {"type": "object", "properties": {"spec": OPEN, "status": OPEN}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


EXTRA_CRDS = [
    open_crd("route.openshift.io", "v1", "Route", "routes"),
    open_crd("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes"),
    open_crd("gateway.networking.k8s.io", "v1", "Gateway", "gateways"),
]


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    crds = [*crds_for({"kuberay": "v1.7.0"}), *EXTRA_CRDS]
    with FakeCluster(crds=crds, tick_interval=TICK, controllers=[RayClusterController()]) as c:
        yield c


def route(name: str, ns: str, service: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "route.openshift.io/v1",
        "kind": "Route",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"to": {"kind": "Service", "name": service}, **spec},
    }


def ingress(name: str, ns: str, service: str, port: dict[str, Any], **spec: Any) -> dict[str, Any]:
    backend = {"service": {"name": service, "port": port}}
    path = {"path": "/ray", "pathType": "Prefix", "backend": backend}
    rule = {"host": "ray.example.com", "http": {"paths": [path]}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"rules": [rule], **spec},
    }


def httproute(name: str, ns: str, service: str, port: int, section: str | None = None) -> Any:
    parent: dict[str, Any] = {"name": "gw"}
    if section:
        parent["sectionName"] = section
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "parentRefs": [parent],
            "hostnames": ["dash.example.org"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/d"}}],
                    "backendRefs": [{"name": service, "port": port}],
                }
            ],
        },
    }


def gateway(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "gw", "namespace": ns},
        "spec": {
            "listeners": [
                {"name": "web", "protocol": "HTTP", "port": 80},
                {"name": "secure", "protocol": "HTTPS", "port": 443},
            ]
        },
    }


def test_route_with_tls(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.create(route("other", ns, "someone-else-svc", host="wrong.example.com"))
    fc.create(
        route(
            "dash",
            ns,
            "demo-head-svc",
            host="ray.apps.example.com",
            tls={"termination": "edge"},
            port={"targetPort": "dashboard"},
        )
    )
    assert find_dashboard_uri(client, ns, "demo-head-svc") == "https://ray.apps.example.com"


def test_route_to_another_port_is_not_the_dashboard(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.create(
        route("client", ns, "demo-head-svc", host="c.example.com", port={"targetPort": 10001})
    )
    with pytest.raises(DashboardNotExposed):
        find_dashboard_uri(client, ns, "demo-head-svc")


@pytest.mark.parametrize(
    ("port", "tls", "expected"),
    [
        ({"number": 8265}, False, "http://ray.example.com/ray"),
        ({"name": "dashboard"}, True, "https://ray.example.com/ray"),
    ],
)
def test_ingress(
    fc: FakeCluster, client: Client, ns: str, port: dict[str, Any], tls: bool, expected: str
) -> None:
    extra = {"tls": [{"hosts": ["ray.example.com"]}]} if tls else {}
    fc.create(ingress("ing", ns, "demo-head-svc", port, **extra))
    assert find_dashboard_uri(client, ns, "demo-head-svc") == expected


def test_ingress_to_another_service_is_ignored(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.create(ingress("ing", ns, "not-ray", {"number": 8265}))
    with pytest.raises(DashboardNotExposed):
        find_dashboard_uri(client, ns, "demo-head-svc")


@pytest.mark.parametrize(("section", "scheme"), [("secure", "https"), ("web", "http")])
def test_httproute_scheme_comes_from_the_gateway_listener(
    fc: FakeCluster, client: Client, ns: str, section: str, scheme: str
) -> None:
    fc.create(gateway(ns))
    fc.create(httproute("hr", ns, "demo-head-svc", 8265, section))
    assert find_dashboard_uri(client, ns, "demo-head-svc") == f"{scheme}://dash.example.org/d"


def test_httproute_without_a_readable_gateway_is_plain_http(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.create(httproute("hr", ns, "demo-head-svc", 8265))
    assert find_dashboard_uri(client, ns, "demo-head-svc") == "http://dash.example.org/d"


def test_route_wins_over_ingress(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.create(ingress("ing", ns, "demo-head-svc", {"number": 8265}))
    fc.create(route("r", ns, "demo-head-svc", host="route.example.com"))
    assert find_dashboard_uri(client, ns, "demo-head-svc") == "http://route.example.com"


def test_cluster_dashboard_uri_uses_the_head_service_kuberay_reports(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    cluster = Cluster(ClusterConfiguration("demo", namespace=ns), client).apply()
    cluster.wait_ready(timeout=10, poll=0.01, max_poll=0.05, progress=False)
    with pytest.raises(DashboardNotExposed) as info:
        cluster.cluster_dashboard_uri()
    message = str(info.value)
    assert f"kubectl port-forward -n {ns} svc/demo-head-svc 8265:8265" in message
    assert "http://localhost:8265" in message
    assert "port-forward" in cluster.details().dashboard
    fc.create(route("r", ns, "demo-head-svc", host="demo.example.com"))
    assert cluster.cluster_dashboard_uri() == "http://demo.example.com"
    assert cluster.details().dashboard == "http://demo.example.com"


def test_kinds_not_served_are_skipped(client: Client, ns: str) -> None:
    # A cluster with KubeRay only: no Route or HTTPRoute types (Ingress is always served).
    with (
        FakeCluster(crds=crds_for({"kuberay": "v1.7.0"})) as bare,
        client_for(bare) as c,
        pytest.raises(DashboardNotExposed, match=r"does not serve Route .*HTTPRoute") as info,
    ):
        find_dashboard_uri(c, "default", "demo-head-svc")
    assert "port-forward -n default svc/demo-head-svc" in str(info.value)


def test_kinds_we_may_not_list_are_named(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.deny(verb="list", resource="routes")
    try:
        fc.create(ingress("ing", ns, "demo-head-svc", {"number": 8265}))
        assert find_dashboard_uri(client, ns, "demo-head-svc") == "http://ray.example.com/ray"
        with pytest.raises(
            DashboardNotExposed, match=r"not allowed to list routes\.route\.openshift\.io"
        ):
            find_dashboard_uri(client, ns, "other-svc")
    finally:
        fc.clear_denies()


def test_other_errors_are_flarekit_errors(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.inject(f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses", status=500, times=None)
    try:
        with pytest.raises(Exception) as info:
            find_dashboard_uri(client, ns, "demo-head-svc")
    finally:
        fc.clear_faults()
    assert type(info.value).__module__.startswith("flarekit")
    assert not isinstance(info.value, (Forbidden, DashboardNotExposed))


def test_proxy_address_quotes_the_names() -> None:
    from flarekit.cluster._endpoints import proxy_address

    assert (
        proxy_address("https://10.0.0.1:6443/", "team a", "demo-head-svc", 8265)
        == "https://10.0.0.1:6443/api/v1/namespaces/team%20a/services/demo-head-svc:8265/proxy"
    )


def test_dashboard_client_goes_through_the_api_server_when_nothing_exposes_it(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    cluster = Cluster(ClusterConfiguration("via", namespace=ns), client).apply()
    cluster.wait_ready(timeout=10, poll=0.01, max_poll=0.05, progress=False)
    dashboard = cluster.dashboard_client()
    assert dashboard.address == (
        f"{client.server}/api/v1/namespaces/{ns}/services/via-head-svc:8265/proxy"
    )
    # The client's own bearer token goes along; repr and errors never show it.
    assert "Authorization" in repr(dashboard) and fc.token not in repr(dashboard)
    # FakeCluster has no proxy to Services (404): not ready, and nothing to wait for.
    assert not cluster.is_dashboard_ready()
    fc.create(route("r2", ns, "via-head-svc", host="via.example.com"))
    assert cluster.dashboard_client().address == "http://via.example.com:80"


def test_job_client_is_the_dashboard_client_as_codeflare_names_it(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    cluster = Cluster(ClusterConfiguration("named", namespace=ns), client).apply()
    fc.create(route("r3", ns, "named-head-svc", host="named.example.com"))
    assert cluster.job_client.address == "http://named.example.com:80"
