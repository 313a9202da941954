"""Which server the contract suite ran against, visible in every test report."""

from __future__ import annotations

import kubernetes
from contract_backend import Cluster


def test_version_names_the_server(cluster: Cluster) -> None:
    """Each backend says what it is: the real control plane its Kubernetes release."""
    version = kubernetes.client.VersionApi(cluster.api_client()).get_code()
    assert version.git_version
    if cluster.backend.name == "controlplane":
        assert cluster.backend.real
        assert version.git_version.startswith("v1.")


def test_namespace_is_fresh(cluster: Cluster) -> None:
    core = kubernetes.client.CoreV1Api(cluster.api_client())
    namespace = core.read_namespace(cluster.namespace)
    assert namespace.status.phase == "Active"
    listed = kubernetes.client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
        "kueue.x-k8s.io", cluster.version("kueue.x-k8s.io"), cluster.namespace, "localqueues"
    )
    assert listed["items"] == []
