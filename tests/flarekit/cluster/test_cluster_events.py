"""A Ray cluster's events (its RayCluster and its pods) and applying one without a queue on
purpose, on FakeCluster and on the real control plane with the same code. KubeRay runs on
neither here, so the test plays its part: it makes a head pod labelled as KubeRay labels it,
and the scheduler (the real one, or FakeCluster's) writes its events."""

from __future__ import annotations

import pytest

from flarekit import ConfigError
from flarekit.cluster import Cluster, ClusterConfiguration
from flarekit.kueue import QueueOptOutWarning
from flarekit_testing import ClusterBackend, FakeCluster
from kube_support import client_for, new_namespace
from wait_support import wait_until


def test_cluster_without_queue_and_its_events(backend: ClusterBackend) -> None:
    namespace = new_namespace(backend, "rc-")
    client = client_for(backend, namespace=namespace)
    cluster = Cluster(ClusterConfiguration("rc", num_workers=0), client=client)
    # Kueue is installed and the namespace has no LocalQueue: without the opt-out, an error
    with pytest.raises(ConfigError, match="has no LocalQueues"):
        cluster.apply()
    with pytest.warns(QueueOptOutWarning, match=f"RayCluster {namespace}/rc"):
        cluster.apply(no_queue=True)
    stored = backend.get("rayclusters", "rc", namespace)
    assert stored is not None
    assert "kueue.x-k8s.io/queue-name" not in (stored["metadata"].get("labels") or {})

    head = "rc-head-abcde"
    backend.add_pod(namespace, head, labels={"ray.io/cluster": "rc", "ray.io/node-type": "head"})
    backend.add_pod(namespace, "other", labels={"ray.io/cluster": "another"})
    wait_until(
        lambda: any(e.involved_object.name == head for e in cluster.events()),
        "an event about the head pod",
        timeout=60,
        poll=0.1,
    )
    events = cluster.events()
    assert any(e.reason == "Scheduled" and e.involved_object.kind == "Pod" for e in events)
    assert all(e.involved_object.name != "other" for e in events)


def test_no_queue_with_a_queue_is_refused_before_any_request() -> None:
    with FakeCluster() as fc:
        client = client_for(fc)
        cluster = Cluster(ClusterConfiguration("rc", local_queue="lq"), client=client)
        before = len(fc.requests)
        with pytest.raises(ConfigError, match=r"local_queue.*given with no_queue=True"):
            cluster.apply(no_queue=True)
        assert len(fc.requests) == before
