"""Attaching to clusters made by someone else, and listing clusters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from facade_support import FAST, TICK, raw_raycluster

from flarekit import Client, NotFound
from flarekit.cluster import (
    Cluster,
    ClusterConfiguration,
    ClusterList,
    ClusterState,
    get_cluster,
    list_all_clusters,
    list_all_queued,
)
from flarekit_testing import AppWrapperController, FakeCluster, RayClusterController

RELEASES = {"kuberay": "v1.7.0", "appwrapper": "v1.2.1"}


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    controllers = [RayClusterController(), AppWrapperController()]
    with FakeCluster(releases=RELEASES, tick_interval=TICK, controllers=controllers) as cluster:
        yield cluster


def wrapper(name: str, ns: str, template: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"components": [{"template": template}]},
    }


def test_get_cluster_made_by_someone_else(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.create(raw_raycluster("theirs", ns, workers=3, labels={"owner": "bob"}))
    cluster = get_cluster("theirs", ns, client)
    cfg = cluster.config
    assert (cfg.name, cfg.namespace, cfg.appwrapper) == ("theirs", ns, False)
    assert (cfg.worker_group_name, cfg.num_workers, cfg.min_workers, cfg.max_workers) == (
        "small",
        3,
        0,
        5,
    )
    assert (cfg.ray_version, cfg.image) == ("2.9.0", "rayproject/ray:2.9.0")
    assert (cfg.head_cpu_requests, cfg.head_cpu_limits, cfg.head_memory_limits) == ("1", "2", "2Gi")
    assert cfg.labels == {"owner": "bob"}
    status = cluster.wait_ready(timeout=10, **FAST)
    assert status.workers == "3/3"
    groups = cluster.details().groups
    assert [(g.name, g.replicas, g.cpu, g.memory) for g in groups] == [
        ("head", 1, "1-2", "2Gi"),
        ("small", 3, "500m", "1Gi"),
    ]
    assert cluster.down(wait=True, timeout=10, **FAST)


def test_get_cluster_inside_an_appwrapper_of_another_name(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    inner = raw_raycluster("inner-rc", ns)
    del inner["metadata"]["namespace"]
    fc.create(wrapper("outer", ns, inner))
    # Before the AppWrapper made it, the RayCluster is found through the AppWrapper's name.
    early = get_cluster("outer", ns, client)
    assert (early.config.name, early.appwrapper_name, early.config.appwrapper) == (
        "inner-rc",
        "outer",
        True,
    )
    ready = early.wait_ready(timeout=10, **FAST)
    assert ready.ready and ready.appwrapper == "outer"
    late = get_cluster("inner-rc", ns, client)  # now through the RayCluster's owner
    assert (late.config.name, late.appwrapper_name) == ("inner-rc", "outer")
    assert late.config.namespace == ns
    assert late.down(wait=True, timeout=10, **FAST)
    assert fc.get("appwrappers", "outer", ns) is None


def test_get_cluster_that_does_not_exist(client: Client, ns: str) -> None:
    with pytest.raises(NotFound, match="no RayCluster 'nothing' and no AppWrapper"):
        get_cluster("nothing", ns, client)


def test_an_appwrapper_without_a_raycluster_is_not_a_cluster(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {}}
    fc.create(wrapper("batch", ns, job))
    with pytest.raises(NotFound):
        get_cluster("batch", ns, client)
    assert list_all_clusters(ns, client) == []


def test_list_all_clusters_pairs_appwrappers_with_their_rayclusters(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.create(raw_raycluster("b-plain", ns))
    held = raw_raycluster("c-held", ns)
    held["spec"]["suspend"] = True
    fc.create(held)
    Cluster(ClusterConfiguration("a-wrapped", namespace=ns, appwrapper=True), client).apply()
    Cluster(ClusterConfiguration("a-wrapped", namespace=ns, appwrapper=True), client).wait_ready(
        timeout=10, **FAST
    )
    Cluster(ClusterConfiguration("b-plain", namespace=ns), client).wait_ready(timeout=10, **FAST)
    rows = list_all_clusters(ns, client)
    assert isinstance(rows, ClusterList)
    assert [(r.name, r.state, r.appwrapper) for r in rows] == [
        ("a-wrapped", ClusterState.READY, "a-wrapped"),
        ("b-plain", ClusterState.READY, None),
        ("c-held", ClusterState.SUSPENDED, None),
    ]
    text = str(rows)
    assert text.splitlines()[0] == f"Ray clusters in namespace {ns}: 3"
    assert text.splitlines()[1].split() == [
        "NAME",
        "STATE",
        "WORKERS",
        "QUEUE",
        "APPWRAPPER",
        "REASON",
    ]
    assert "c-held" in rows._repr_html_()
    # Suspended without a queue label is not waiting for admission.
    assert list_all_queued(ns, client) == []


def test_empty_namespace_lists_nothing(client: Client, ns: str) -> None:
    rows = list_all_clusters(ns, client)
    assert rows == [] and str(rows) == f"Ray clusters in namespace {ns}: 0"
    assert "<table" in rows._repr_html_()
