"""Checks that need the server, before any write: autoscaling under Kueue, and a priority
class that exists."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from facade_support import TICK

from flarekit import Client
from flarekit.cluster import Cluster, ClusterConfiguration, ConfigError
from flarekit_testing import FakeCluster, RayClusterController
from kube_support import kueue_api, seed_queues, writes

RELEASES = {"kuberay": "v1.7.0", "kueue": "v0.19.2"}


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(
        releases=RELEASES, tick_interval=TICK, controllers=[RayClusterController()]
    ) as cluster:
        cluster.create({"apiVersion": kueue_api(cluster), "kind": "WorkloadPriorityClass",
                        "metadata": {"name": "high"}, "value": 1000})  # fmt: skip
        yield cluster


def test_autoscaling_with_a_named_queue_is_refused_before_any_write(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns)
    config = ClusterConfiguration(name="auto", namespace=ns, enable_autoscaling=True,
                                  max_workers=4, local_queue="lq")  # fmt: skip
    assert "enableInTreeAutoscaling: true" in Cluster(config).to_yaml()  # offline: allowed
    before = writes(fc)
    with pytest.raises(ConfigError) as caught:
        Cluster(config, client).apply()
    (problem,) = caught.value.problems
    assert problem.field == "enable_autoscaling"
    assert "LocalQueue 'lq' (asked for)" in problem.message and "stay suspended" in problem.message
    assert writes(fc) == before


def test_autoscaling_in_a_namespace_with_a_default_queue_writes_nothing(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns, default=True)
    config = ClusterConfiguration(name="auto", namespace=ns, enable_autoscaling=True,
                                  max_workers=4)  # fmt: skip
    before = writes(fc)
    with pytest.raises(ConfigError) as caught:
        Cluster(config, client).apply()
    (problem,) = caught.value.problems
    assert problem.field == "enable_autoscaling"
    assert "LocalQueue 'lq' (the namespace's default)" in problem.message
    assert "Kueue v0.19.2" in problem.message  # the release the server runs
    assert writes(fc) == before
    assert fc.get("rayclusters", "auto", ns) is None


def test_a_priority_class_that_does_not_exist_is_refused(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns, default=True)
    config = ClusterConfiguration(name="prio", namespace=ns, priority_class="urgent")
    before = writes(fc)
    with pytest.raises(ConfigError) as caught:
        Cluster(config, client).apply()
    (problem,) = caught.value.problems
    assert (problem.field, problem.value) == ("priority_class", "urgent")
    assert problem.expected == "one of the WorkloadPriorityClasses: high"
    assert writes(fc) == before

    config.priority_class = "high"
    Cluster(config, client).apply()
    stored = fc.get("rayclusters", "prio", ns)
    assert stored is not None
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"
    Cluster(config, client).down()
