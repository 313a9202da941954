"""A Ray cluster in a Kueue LocalQueue: admitted by Kueue, made ready by KubeRay, described and
taken down; the same in an AppWrapper, which the AppWrapper controller releases once Kueue
admits it."""

from __future__ import annotations

import pytest
from e2e_support import Backend, small_cluster

from flarekit import Client
from flarekit.cluster import Cluster, ClusterState
from kube_support import QUEUE_LABEL


def _admitted(backend: Backend, namespace: str, owner: str) -> bool:
    """Kueue admitted the Workload of `owner` (condition Admitted=True)."""
    for workload in backend.owned_by("workloads", namespace, owner):
        conditions = (workload.get("status") or {}).get("conditions") or []
        if any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions):
            return True
    return False


@pytest.mark.parametrize("wrapped", [False, True], ids=["raycluster", "appwrapper"])
def test_queued_cluster_is_admitted_becomes_ready_and_goes_down(
    backend: Backend, namespace: str, client: Client, lq: str, wrapped: bool
) -> None:
    cluster = Cluster(small_cluster("ray", namespace, lq, appwrapper=wrapped), client)
    cluster.apply()
    owner = cluster.appwrapper_name if wrapped else "ray"

    status = cluster.wait_ready(**backend.waits)
    assert status.state is ClusterState.READY
    assert status.queue == lq
    assert _admitted(backend, namespace, owner)
    if wrapped:
        [wrapper] = backend.objects("appwrappers", namespace)
        assert wrapper["metadata"]["labels"][QUEUE_LABEL] == lq
        assert status.appwrapper == cluster.appwrapper_name
        # The AppWrapper controller made the RayCluster; Kueue queues the wrapper, not it.
        [ray] = backend.objects("rayclusters", namespace)
        assert [r["kind"] for r in ray["metadata"]["ownerReferences"]] == ["AppWrapper"]
        assert backend.owned_by("workloads", namespace, "ray", kind="RayCluster") == []

    details = cluster.details()
    assert details.status.state is ClusterState.READY
    assert details.admission is not None and "admitted" in details.admission.lower()
    [head, workers] = details.groups
    assert (head.replicas, workers.replicas) == (1, 1)

    assert cluster.down(wait=True, **backend.waits)
    backend.wait(lambda: not backend.objects("rayclusters", namespace), "the RayCluster goes")
