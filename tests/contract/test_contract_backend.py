"""Which server the contract suite ran against, visible in every test report."""

from __future__ import annotations

import os

import kubernetes
import pytest
from contract_backend import ENV, Cluster


def test_real_cluster_configured(cluster: Cluster) -> None:
    if not os.environ.get(ENV):
        pytest.skip(f"{ENV} not set: contract suite ran against FakeCluster only")
    assert cluster.backend.real
    version = kubernetes.client.VersionApi(cluster.api_client()).get_code()
    assert version.git_version


def test_namespace_is_fresh(cluster: Cluster) -> None:
    core = kubernetes.client.CoreV1Api(cluster.api_client())
    namespace = core.read_namespace(cluster.namespace)
    assert namespace.status.phase == "Active"
    listed = kubernetes.client.CustomObjectsApi(cluster.api_client()).list_namespaced_custom_object(
        "kueue.x-k8s.io", cluster.version("kueue.x-k8s.io"), cluster.namespace, "localqueues"
    )
    assert listed["items"] == []
