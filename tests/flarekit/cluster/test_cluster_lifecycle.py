"""Cluster end to end on FakeCluster without Kueue: apply -> wait_ready -> details -> down."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from facade_support import FAST, TICK, raw_raycluster

from flarekit import Client
from flarekit.cluster import (
    Cluster,
    ClusterConfiguration,
    ClusterState,
    ConfigError,
    TerminalFailure,
    WaitTimeout,
)
from flarekit_testing import AppWrapperController, FakeCluster, RayClusterController
from kube_support import writes

RELEASES = {"kuberay": "v1.7.0", "appwrapper": "v1.2.1"}
FAILURE = "simulated: 0/3 nodes have 64 free CPUs <insufficient cpu>"


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    controllers = [
        RayClusterController(
            ready_after=0,
            fail_after=0,
            fail_when=lambda o: str(o["metadata"]["name"]).startswith("doomed"),
            failure_message=FAILURE,
        ),
        AppWrapperController(),
    ]
    with FakeCluster(releases=RELEASES, tick_interval=TICK, controllers=controllers) as cluster:
        yield cluster


def config(name: str, ns: str, **kwargs: Any) -> ClusterConfiguration:
    base: dict[str, Any] = {
        "namespace": ns,
        "num_workers": 2,
        "head_memory_requests": 2,
        "head_memory_limits": 2,
    }
    return ClusterConfiguration(name, **{**base, **kwargs})


def test_apply_wait_details_down(fc: FakeCluster, client: Client, ns: str) -> None:
    cluster = Cluster(config("demo", ns), client)
    assert cluster.apply() is cluster
    stored = fc.get("rayclusters", "demo", ns)
    assert stored is not None and stored["spec"]["workerGroupSpecs"][0]["replicas"] == 2
    status = cluster.wait_ready(timeout=10, **FAST)
    assert status.state is ClusterState.READY and status.ready
    assert (status.workers_ready, status.workers_desired) == (2, 2)
    assert status.head_address == f"demo-head-svc.{ns}.svc"
    assert cluster.cluster_uri() == f"ray://demo-head-svc.{ns}.svc:10001"

    details = cluster.details()
    assert details.kind == "RayCluster" and details.status.ready
    assert [g.name for g in details.groups] == ["head", "workers"]
    assert details.groups[1].replicas == 2 and details.groups[0].memory == "2G"
    assert details.admission is None
    assert "port-forward" in details.dashboard
    text = str(details)
    assert "READY" in text and "cluster uri" in text and "GROUP" in text
    html = details._repr_html_()
    assert html.count("<table") == 2 and "READY" in html and f"ray://demo-head-svc.{ns}" in html

    assert cluster.down(wait=True, timeout=10, **FAST) is True
    assert fc.get("rayclusters", "demo", ns) is None
    assert cluster.down() is False


def test_reapply_updates_in_place(fc: FakeCluster, client: Client, ns: str) -> None:
    cluster = Cluster(config("grow", ns), client).apply()
    uid = fc.get("rayclusters", "grow", ns)["metadata"]["uid"]  # type: ignore[index]
    cluster.config.num_workers = 3
    cluster.apply()
    stored = fc.get("rayclusters", "grow", ns)
    assert stored is not None and stored["metadata"]["uid"] == uid
    assert stored["spec"]["workerGroupSpecs"][0]["replicas"] == 3


def test_namespace_defaults_to_the_clients(fc: FakeCluster, client: Client) -> None:
    cluster = Cluster(ClusterConfiguration("nsless", head_memory_limits=8), client)
    assert cluster.namespace == client.namespace
    cluster.apply()
    assert fc.get("rayclusters", "nsless", client.namespace) is not None
    assert cluster.config.namespace == client.namespace
    cluster.down()


def test_appwrapper_wrapped_cluster(fc: FakeCluster, client: Client, ns: str) -> None:
    cluster = Cluster(config("wrapped", ns, appwrapper=True), client).apply()
    assert fc.get("appwrappers", "wrapped", ns) is not None
    status = cluster.wait_ready(timeout=10, **FAST)
    assert status.ready and status.appwrapper == "wrapped"
    inner = fc.get("rayclusters", "wrapped", ns)
    assert inner is not None and inner["metadata"]["ownerReferences"][0]["kind"] == "AppWrapper"
    assert cluster.details().kind == "AppWrapper"
    assert cluster.down(wait=True, timeout=10, **FAST) is True
    assert fc.get("appwrappers", "wrapped", ns) is None
    assert fc.get("rayclusters", "wrapped", ns) is None


def test_unwrapped_down_of_a_wrapped_cluster_deletes_its_appwrapper(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    Cluster(config("inner", ns, appwrapper=True), client).apply().wait_ready(10, **FAST)
    bare = Cluster(config("inner", ns), client)
    assert bare.status().appwrapper == "inner"
    with pytest.raises(ConfigError, match="appwrapper") as info:
        bare.apply()
    assert "belongs to AppWrapper 'inner'" in str(info.value)
    assert bare.down(wait=True, timeout=10, **FAST) is True
    assert fc.get("appwrappers", "inner", ns) is None


def test_wrapping_a_standalone_cluster_is_refused_before_any_write(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    Cluster(config("alone", ns), client).apply()
    fc.clear_requests()
    with pytest.raises(ConfigError, match="already exists outside an AppWrapper"):
        Cluster(config("alone", ns, appwrapper=True), client).apply()
    assert writes(fc) == 0
    assert fc.get("appwrappers", "alone", ns) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("num_workers", -3),
        ("worker_memory_requests", "lots"),
        ("worker_cpu_requests", "two"),
        ("head_extended_resource_requests", {"nvidia.com/gpu": -1}),
        ("image", "rayproject/ray:2.9.0"),
    ],
)
def test_invalid_configuration_sends_no_request(
    fc: FakeCluster, client: Client, ns: str, field: str, value: object
) -> None:
    cfg = config("bad", ns)
    setattr(cfg, field, value)  # changed after construction, so only apply() can catch it
    fc.clear_requests()
    with pytest.raises(ConfigError) as info:
        Cluster(cfg, client).apply()
    assert field in str(info.value)
    assert fc.requests == []


def test_wait_reports_the_failure_reason(fc: FakeCluster, client: Client, ns: str) -> None:
    cluster = Cluster(config("doomed", ns), client).apply()
    with pytest.raises(TerminalFailure) as info:
        cluster.wait_ready(timeout=10, **FAST)
    assert FAILURE in str(info.value)
    assert f"Ray cluster {ns}/doomed" in str(info.value)
    assert cluster.status().state is ClusterState.FAILED


def test_wait_timeout_names_the_cluster_and_last_state(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    # Suspended by someone: it will not become ready by itself.
    fc.create(
        raw_raycluster("held", ns)
        | {"spec": {**raw_raycluster("held", ns)["spec"], "suspend": True}}
    )
    cluster = Cluster(config("held", ns), client)
    with pytest.raises(WaitTimeout) as info:
        cluster.wait_ready(timeout=0.1, **FAST)
    message = str(info.value)
    assert f"Ray cluster {ns}/held to be ready" in message
    assert "timeout 0.1s" in message
    assert "SUSPENDED" in message


def test_status_of_a_missing_cluster_is_not_found(client: Client, ns: str) -> None:
    from flarekit import NotFound

    with pytest.raises(NotFound):
        Cluster(config("ghost", ns), client).status()


def test_to_yaml_and_to_dict_need_no_cluster() -> None:
    cluster = Cluster(ClusterConfiguration("offline", namespace="x", local_queue="q"))
    data = cluster.to_dict()
    assert data["kind"] == "RayCluster"
    assert data["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "q"}
    assert "kind: RayCluster" in cluster.to_yaml()
    assert cluster._client is None  # no client was even made
