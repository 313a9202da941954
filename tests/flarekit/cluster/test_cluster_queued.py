"""Clusters sent to Kueue: queue resolution before any write, queued states, admission,
AppWrapper-wrapped queued clusters, and removal of what a failed apply created."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from facade_support import FAST, TICK

from flarekit import ApiError, Client
from flarekit._wait import wait_until
from flarekit.cluster import (
    Cluster,
    ClusterConfiguration,
    ClusterState,
    ConfigError,
    LabelsDropped,
    WaitTimeout,
    get_cluster,
    list_all_clusters,
    list_all_queued,
)
from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    RayClusterController,
)
from kube_support import FAST_RETRY, QUEUE_LABEL, new_namespace, seed_queues, writes

RELEASES = {"kuberay": "v1.7.0", "kueue": "v0.19.2", "appwrapper": "v1.2.1"}


@pytest.fixture(scope="module")
def kueue() -> KueueController:
    return KueueController(pending=True)


@pytest.fixture(scope="module")
def fc(kueue: KueueController) -> Iterator[FakeCluster]:
    controllers = [RayClusterController(), kueue, AppWrapperController()]
    with FakeCluster(releases=RELEASES, tick_interval=TICK, controllers=controllers) as cluster:
        yield cluster


@pytest.fixture
def ns(fc: FakeCluster) -> str:
    """A fresh namespace with a LocalQueue `lq`."""
    name = new_namespace(fc)
    seed_queues(fc, name)
    return name


def config(name: str, ns: str, **kwargs: Any) -> ClusterConfiguration:
    return ClusterConfiguration(name, namespace=ns, head_memory_limits=8, **kwargs)


def test_missing_local_queue_is_refused_before_any_write(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.clear_requests()
    with pytest.raises(ConfigError) as info:
        Cluster(config("c", ns, local_queue="nope"), client).apply()
    message = str(info.value)
    assert "local_queue" in message and "'nope'" in message and "'lq'" in message
    assert writes(fc) == 0
    assert fc.objects("rayclusters", ns) == []


def test_no_queue_named_and_no_default_is_refused(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.clear_requests()
    with pytest.raises(ConfigError, match="no default LocalQueue"):
        Cluster(config("c", ns), client).apply()
    assert writes(fc) == 0


def test_default_local_queue_is_used_and_labelled(fc: FakeCluster, client: Client) -> None:
    ns = new_namespace(fc)  # without the `ns` fixture's queue `lq`
    seed_queues(fc, ns, "default", "other")
    cluster = Cluster(config("c", ns), client).apply()
    stored = fc.get("rayclusters", "c", ns)
    assert stored is not None and stored["metadata"]["labels"][QUEUE_LABEL] == "default"
    assert cluster.config.local_queue == "default"


def test_queued_cluster_waits_for_admission(
    fc: FakeCluster, client: Client, kueue: KueueController, ns: str
) -> None:
    cluster = Cluster(config("q", ns, local_queue="lq", num_workers=2), client).apply()
    stored = fc.get("rayclusters", "q", ns)
    assert stored is not None and stored["metadata"]["labels"][QUEUE_LABEL] == "lq"

    # Once Kueue has suspended it, the cluster is QUEUED and a short wait times out saying so.
    queued_status = wait_until(
        cluster.status,
        lambda s: s.state is ClusterState.QUEUED,
        None,
        timeout=10,
        describe="the cluster to be queued",
        **FAST,
    )
    assert queued_status.reason is not None and "'lq'" in queued_status.reason
    with pytest.raises(WaitTimeout) as info:
        cluster.wait_ready(timeout=0.1, **FAST)
    assert "QUEUED" in str(info.value) and "Kueue: pending" in str(info.value)

    queued = list_all_queued(ns, client)
    assert [s.name for s in queued] == ["q"] and queued[0].queue == "lq"
    assert "q" in str(queued) and "QUEUED" in queued._repr_html_()
    details = cluster.details()
    assert details.admission is not None and details.admission.startswith("pending")
    assert "admission" in str(details)

    kueue.admit("q", ns)
    status = cluster.wait_ready(timeout=10, **FAST)
    assert status.ready and status.queue == "lq" and status.workers == "2/2"
    assert list_all_queued(ns, client) == []
    details = cluster.details()
    assert details.admission is not None and details.admission.startswith("admitted")
    assert cluster.down(wait=True, timeout=10, **FAST)


def test_queued_appwrapper_cluster(
    fc: FakeCluster, client: Client, kueue: KueueController, ns: str
) -> None:
    cluster = Cluster(config("aw", ns, local_queue="lq", appwrapper=True), client).apply()
    wrapper = fc.get("appwrappers", "aw", ns)
    assert wrapper is not None and wrapper["metadata"]["labels"][QUEUE_LABEL] == "lq"
    queued = list_all_queued(ns, client)
    assert [(s.name, s.appwrapper, s.state) for s in queued] == [("aw", "aw", ClusterState.QUEUED)]
    assert fc.get("rayclusters", "aw", ns) is None  # not made before admission

    attached = get_cluster("aw", ns, client)  # a queued AppWrapper, no RayCluster yet
    assert attached.config.appwrapper and attached.config.local_queue == "lq"
    assert attached.status().state is ClusterState.QUEUED

    kueue.admit("aw", ns)
    assert cluster.wait_ready(timeout=10, **FAST).ready
    rows = list_all_clusters(ns, client)
    assert [(s.name, s.state) for s in rows] == [("aw", ClusterState.READY)]
    assert cluster.down(wait=True, timeout=10, **FAST)
    assert fc.get("rayclusters", "aw", ns) is None


class LabelStrippingClient(Client):
    """Stands for a mutating admission webhook that removes the Kueue labels on write."""

    fc: FakeCluster

    def apply_tracked(self, obj: Any, **kwargs: Any) -> Any:
        stored, created = super().apply_tracked(obj, **kwargs)
        meta = stored.metadata
        plural = "appwrappers" if type(stored).__name__ == "AppWrapper" else "rayclusters"
        self.fc.patch(
            plural, meta.name, {"metadata": {"labels": {QUEUE_LABEL: None}}}, meta.namespace
        )
        return self.get(type(stored), meta.name, namespace=meta.namespace), created


@pytest.fixture
def stripping(fc: FakeCluster) -> Iterator[LabelStrippingClient]:
    from flarekit import from_kubeconfig

    c = LabelStrippingClient(from_kubeconfig(fc.kubeconfig_path), retry=FAST_RETRY)
    c.fc = fc
    yield c
    c.close()


@pytest.mark.parametrize("appwrapper", [False, True])
def test_dropped_labels_remove_what_apply_created(
    fc: FakeCluster, stripping: Client, ns: str, appwrapper: bool
) -> None:
    with pytest.raises(LabelsDropped, match="deleted again"):
        Cluster(config("strip", ns, local_queue="lq", appwrapper=appwrapper), stripping).apply()
    # The AppWrapper controller holds a finalizer, as the real one does: the object is gone
    # once the controller has released it.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (
        fc.get("rayclusters", "strip", ns) or fc.get("appwrappers", "strip", ns)
    ):
        time.sleep(0.02)
    assert fc.get("rayclusters", "strip", ns) is None
    assert fc.get("appwrappers", "strip", ns) is None


def test_dropped_labels_leave_an_existing_cluster_alone(
    fc: FakeCluster, client: Client, stripping: Client, ns: str
) -> None:
    Cluster(config("kept", ns, local_queue="lq"), client).apply()
    with pytest.raises(LabelsDropped, match="left in place"):
        Cluster(config("kept", ns, local_queue="lq"), stripping).apply()
    assert fc.get("rayclusters", "kept", ns) is not None


def test_failed_cleanup_is_reported_on_the_error(
    fc: FakeCluster, stripping: Client, ns: str
) -> None:
    path = f"/apis/ray.io/v1/namespaces/{ns}/rayclusters/sticky"
    rule = fc.inject(path, status=500, times=None, method="DELETE")
    try:
        with pytest.raises(LabelsDropped) as info:
            Cluster(config("sticky", ns, local_queue="lq"), stripping).apply()
    finally:
        fc.clear_faults()
    assert rule.hits >= 1
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert f"could not delete RayCluster {ns}/sticky" in notes and "by hand" in notes


def test_failed_apply_leaves_nothing_behind(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.inject(f"/apis/ray.io/v1/namespaces/{ns}/rayclusters", status=500, method="PATCH")
    with pytest.raises(ApiError):
        Cluster(config("flaky", ns, local_queue="lq"), client).apply()
    assert fc.objects("rayclusters", ns) == []
