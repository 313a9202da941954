"""Ray clusters in the legacy MCAD AppWrapper (workload.codeflare.dev/v1beta1).

The facade writes, reads, lists and deletes them in v1beta1, the version an MCAD cluster
serves, and maps MCAD's status onto the same `ClusterState`. Kueue does not queue v1beta1
AppWrappers, so `local_queue` and `priority_class` are refused before anything is created.
No MCAD controller is simulated: the tests set the status MCAD would write, and create the
RayCluster it would dispatch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from facade_support import FAST, TICK

from flarekit import Client, ConfigError
from flarekit.cluster import (
    Cluster,
    ClusterConfiguration,
    ClusterState,
    get_cluster,
    list_all_clusters,
    list_all_queued,
)
from flarekit.cluster._status import cluster_status
from flarekit_testing import FakeCluster, RayClusterController
from kube_support import QUEUE_LABEL, seed_queues, writes

RELEASES = {"kuberay": "v1.7.0", "appwrapper-mcad": "v1.40.0", "kueue": "v0.14.8"}
MCAD = "workload.codeflare.dev/v1beta1"


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    controllers = [RayClusterController()]
    with FakeCluster(releases=RELEASES, tick_interval=TICK, controllers=controllers) as cluster:
        yield cluster


def config(name: str, ns: str, **options: Any) -> ClusterConfiguration:
    return ClusterConfiguration(
        name,
        namespace=ns,
        appwrapper=True,
        num_workers=2,
        worker_node_selector={"pool": "gpu"},
        head_memory_limits=8,
        **options,
    )


def stored_wrapper(fc: FakeCluster, name: str, ns: str) -> dict[str, Any]:
    api = kubernetes.client.CustomObjectsApi(fc.api_client())
    found: dict[str, Any] = api.get_namespaced_custom_object(
        "workload.codeflare.dev", "v1beta1", ns, "appwrappers", name
    )
    return found


def dispatch(fc: FakeCluster, name: str, ns: str) -> None:
    """What MCAD does when it dispatches: Running, and the wrapped RayCluster, owned by it."""
    wrapper = stored_wrapper(fc, name, ns)
    fc.set_status(
        "appwrappers",
        name,
        {
            "state": "Running",
            "isdispatched": True,
            "canrun": True,
            "conditions": [mcad_condition("Dispatched", "AppWrapperRunnable")],
        },
        ns,
    )
    [item] = wrapper["spec"]["resources"]["GenericItems"]
    raycluster = dict(item["generictemplate"])
    owner = {
        "apiVersion": MCAD,
        "kind": "AppWrapper",
        "name": name,
        "uid": wrapper["metadata"]["uid"],
        "controller": True,
    }
    raycluster["metadata"] = {
        **raycluster.get("metadata", {}),
        "namespace": ns,
        "ownerReferences": [owner],
        "labels": {"workload.codeflare.dev/appwrapper": name},
    }
    fc.create(raycluster)


def mcad_condition(type_: str, reason: str = "", message: str = "") -> dict[str, Any]:
    return {"type": type_, "status": "True", "reason": reason, "message": message}


# -- against a cluster running MCAD ---------------------------------------------------------


def test_apply_writes_and_status_reads_mcads_appwrapper(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    cluster = Cluster(config("mc", ns), client).apply()
    wrapper = stored_wrapper(fc, "mc", ns)
    assert wrapper["apiVersion"] == MCAD
    assert "status" not in wrapper  # fresh: MCAD has not seen it
    status = cluster.status()
    assert (status.state, status.queue, status.appwrapper) == (ClusterState.QUEUED, None, "mc")
    assert status.reason == "waiting for MCAD to dispatch it: MCAD has not queued it yet"
    fc.set_status(
        "appwrappers",
        "mc",
        {"state": "Pending", "conditions": [mcad_condition("HeadOfLine", "FrontOfQueue.")]},
        ns,
    )
    status = cluster.status()
    assert status.state is ClusterState.QUEUED
    assert status.reason == (
        "waiting for MCAD to dispatch it: MCAD state Pending (HeadOfLine: FrontOfQueue.)"
    )
    assert [s.name for s in list_all_queued(ns, client)] == ["mc"]
    dispatch(fc, "mc", ns)
    ready = cluster.wait_ready(timeout=10, **FAST)
    assert (ready.state, ready.workers, ready.appwrapper) == (ClusterState.READY, "2/2", "mc")
    assert list_all_queued(ns, client) == []


def test_details_get_cluster_and_listing_read_v1beta1(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    Cluster(config("seen", ns), client).apply()
    found = get_cluster("seen", ns, client)  # through the AppWrapper: no RayCluster yet
    assert (found.config.name, found.config.appwrapper) == ("seen", True)
    assert found.config.num_workers == 2 and found.config.worker_node_selector == {"pool": "gpu"}
    details = found.details()
    assert details.kind == "AppWrapper (MCAD, v1beta1)"
    assert details.status.state is ClusterState.QUEUED and details.admission is None
    assert [g.name for g in details.groups] == ["head", "workers"]
    dispatch(fc, "seen", ns)
    found.wait_ready(timeout=10, **FAST)
    again = get_cluster("seen", ns, client)  # now through the RayCluster's owner
    assert again.status().appwrapper == "seen"
    rows = list_all_clusters(ns, client)
    assert [(r.name, r.state, r.appwrapper) for r in rows] == [("seen", ClusterState.READY, "seen")]


def test_down_deletes_the_v1beta1_appwrapper(fc: FakeCluster, client: Client, ns: str) -> None:
    cluster = Cluster(config("gone", ns), client).apply()
    assert cluster.down(wait=True, timeout=10, **FAST)
    assert fc.get("appwrappers", "gone", ns) is None
    assert not cluster.down()


def test_kueue_options_are_refused_before_anything_is_created(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns, "lq")
    fc.clear_requests()
    cluster = Cluster(config("q", ns, local_queue="lq", priority_class="high"), client)
    with pytest.raises(ConfigError) as caught:
        cluster.apply()
    assert caught.value.fields == ["local_queue", "priority_class"]
    text = str(caught.value)
    assert "local_queue='lq'" in text and "priority_class='high'" in text
    assert "MCAD release v1.40.0" in text and MCAD in text
    assert "Kueue does not queue" in text and "appwrapper=False" in text
    assert writes(fc) == 0
    assert fc.get("appwrappers", "q", ns) is None


def test_a_default_local_queue_is_not_applied_to_mcads_appwrapper(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns, "default")  # Kueue's default queue of the namespace
    Cluster(config("plain", ns), client).apply()
    labels = stored_wrapper(fc, "plain", ns)["metadata"].get("labels") or {}
    assert QUEUE_LABEL not in labels
    bare = Cluster(ClusterConfiguration("bare", namespace=ns, head_memory_limits=8), client)
    bare.apply()  # a RayCluster on its own is still queued by Kueue
    stored = fc.get("rayclusters", "bare", ns) or {}
    assert stored["metadata"]["labels"][QUEUE_LABEL] == "default"


# -- MCAD's status, offline -----------------------------------------------------------------


def mcad(status: dict[str, Any] | None = None, labels: dict[str, str] | None = None) -> Any:
    obj: dict[str, Any] = {
        "apiVersion": MCAD,
        "kind": "AppWrapper",
        "metadata": {"name": "w", "namespace": "n", "labels": labels or {}},
        "spec": {"resources": {"GenericItems": []}},
    }
    if status is not None:
        obj["status"] = status
    return obj


READY_RC = {"metadata": {"name": "c", "namespace": "n"}, "status": {"state": "ready"}}


@pytest.mark.parametrize(
    ("wrapper", "raycluster", "state", "reason"),
    [
        (mcad(), None, ClusterState.QUEUED, "MCAD has not queued it yet"),
        (mcad({}), None, ClusterState.QUEUED, "MCAD has not queued it yet"),
        (mcad({"state": None, "conditions": None}), None, ClusterState.QUEUED, "not queued"),
        (
            mcad({"state": "Pending", "conditions": [mcad_condition("Backoff", "Requeued")]}),
            None,
            ClusterState.QUEUED,
            "MCAD state Pending (Backoff: Requeued)",
        ),
        (mcad({"state": "Pending", "canrun": True}), None, ClusterState.STARTING, "dispatching"),
        (mcad({"state": "Running"}), None, ClusterState.STARTING, "MCAD dispatched it"),
        (mcad({"state": "Running", "isdispatched": True}), READY_RC, ClusterState.READY, None),
        (mcad({"state": "RunningHoldCompletion"}), READY_RC, ClusterState.READY, None),
        (mcad({"state": "Completed"}), None, ClusterState.UNKNOWN, "MCAD state Completed"),
        (
            mcad({"state": "Failed", "conditions": [mcad_condition("Failed", "", "no quota")]}),
            None,
            ClusterState.FAILED,
            "Failed: no quota",
        ),
        (mcad({"state": "Failed"}), None, ClusterState.FAILED, "MCAD reports"),
        (
            mcad({"state": "Deleted", "message": "requeued 3 times"}),
            None,
            ClusterState.FAILED,
            "MCAD removed what the AppWrapper created (requeued 3 times)",
        ),
    ],
)
def test_mcad_status_maps_onto_cluster_state(
    wrapper: dict[str, Any],
    raycluster: dict[str, Any] | None,
    state: ClusterState,
    reason: str | None,
) -> None:
    status = cluster_status(raycluster, wrapper)
    assert status.state is state
    if reason is None:
        assert status.reason is None
    else:
        assert reason in str(status.reason)
    assert status.appwrapper == "w"


def test_a_queue_label_on_mcads_appwrapper_is_not_reported_as_a_kueue_queue() -> None:
    status = cluster_status(None, mcad(labels={QUEUE_LABEL: "lq"}))
    assert status.queue is None
    assert status.state is ClusterState.QUEUED and "Kueue" not in str(status.reason)
