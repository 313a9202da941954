"""`Cluster.local_client_url()`: the Ray client address read from the head Service as it
exists, on FakeCluster and on the real control plane with the same code. KubeRay runs on
neither, so the test makes the head Service as KubeRay does. (A Ray client through a
port-forward to a real head pod: tests/e2e/node.)"""

from __future__ import annotations

import pytest
from client_access_support import (
    Backend,
    head_service,
    new_namespace,
    raycluster,
)

from flarekit import NotFound, RayClientUnavailable
from flarekit.cluster import Cluster, ClusterConfiguration


def test_address_from_the_head_service(backend: Backend) -> None:
    namespace, client = new_namespace(backend, "url")
    cluster = Cluster(ClusterConfiguration("rc", num_workers=0), client=client)

    with pytest.raises(NotFound) as missing:
        cluster.local_client_url()
    assert f"Ray cluster {namespace}/rc does not exist" in "\n".join(missing.value.__notes__)

    backend.create(raycluster("rc", namespace))
    with pytest.raises(RayClientUnavailable, match=r"head Service 'rc-head-svc' does not exist"):
        cluster.local_client_url()

    backend.create(head_service("rc", namespace))
    in_cluster = f"ray://rc-head-svc.{namespace}.svc:10001"
    assert cluster.local_client_url(port_forward=False) == in_cluster


def test_the_client_port_is_read_by_name(backend: Backend) -> None:
    namespace, client = new_namespace(backend, "url")
    backend.create(raycluster("moved", namespace))
    backend.create(head_service("moved", namespace, {"dashboard": 8265, "client": 20001}))
    cluster = Cluster(ClusterConfiguration("moved", num_workers=0), client=client)
    in_cluster = f"ray://moved-head-svc.{namespace}.svc:20001"
    assert cluster.local_client_url(port_forward=False) == in_cluster


def test_a_head_service_without_client_port_is_an_error(backend: Backend) -> None:
    namespace, client = new_namespace(backend, "url")
    backend.create(raycluster("noclient", namespace))
    backend.create(head_service("noclient", namespace, {"gcs-server": 6379, "dashboard": 8265}))
    cluster = Cluster(ClusterConfiguration("noclient", num_workers=0), client=client)
    with pytest.raises(RayClientUnavailable) as exc:
        cluster.local_client_url()
    assert "no port named 'client' or numbered 10001" in str(exc.value)
    assert "gcs-server=6379, dashboard=8265" in str(exc.value)


def test_an_ingress_to_the_client_port_is_the_address(backend: Backend) -> None:
    # codeflare-sdk's local_client_url() returns the host of what exposes the client port.
    namespace, client = new_namespace(backend, "url")
    backend.create(raycluster("exposed", namespace))
    backend.create(head_service("exposed", namespace))
    port = {"number": 10001}
    backend.create(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "rayclient-exposed", "namespace": namespace},
            "spec": {
                "rules": [
                    {
                        "host": f"rayclient-exposed-{namespace}.apps.example.com",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "ImplementationSpecific",
                                    "backend": {
                                        "service": {"name": "exposed-head-svc", "port": port}
                                    },
                                }
                            ]
                        },
                    }
                ]
            },
        }
    )
    cluster = Cluster(ClusterConfiguration("exposed", num_workers=0), client=client)
    assert cluster.local_client_url() == f"ray://rayclient-exposed-{namespace}.apps.example.com"
    # the in-cluster address stays what cluster_uri() composes
    assert cluster.cluster_uri() == f"ray://exposed-head-svc.{namespace}.svc:10001"


def test_outside_a_pod_the_address_needs_a_running_head_pod(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing exposes the client port and this process runs in no pod: the address is a
    # port-forward to the head pod, which must run.
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    namespace, client = new_namespace(backend, "url")
    backend.create(raycluster("headless", namespace))
    backend.create(head_service("headless", namespace))
    cluster = Cluster(ClusterConfiguration("headless", num_workers=0), client=client)
    with pytest.raises(RayClientUnavailable) as exc:
        cluster.local_client_url()
    assert "no head pod runs (there is none)" in str(exc.value)
    assert "wait_ready() waits for it" in str(exc.value)

    # In a pod, the head Service is reachable as it is: no forward.
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    assert cluster.local_client_url() == f"ray://headless-head-svc.{namespace}.svc:10001"
