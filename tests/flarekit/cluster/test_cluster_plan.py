"""Plan before apply: `Cluster.apply(dry_run=True)` and `Cluster.diff()`, on FakeCluster and
on the real control plane with the same code. The server's dry run is the judge of what would
change: nothing is written (the stored object keeps its resourceVersion), its defaults show,
and the diff names only the fields flarekit's field manager owns."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from flarekit import Client, Plan
from flarekit.cluster import Cluster, ClusterConfiguration
from flarekit.kueue import QueueOptOutWarning
from flarekit_testing import ClusterBackend
from kube_support import client_for, new_namespace


@pytest.fixture
def client(backend: ClusterBackend) -> Iterator[Client]:
    with client_for(backend, namespace=new_namespace(backend, "plan-")) as c:
        yield c


def _cluster(client: Client, workers: int) -> Cluster:
    config = ClusterConfiguration("rc", num_workers=workers, min_workers=1, max_workers=4)
    return Cluster(config, client=client)


def _apply(cluster: Cluster) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueueOptOutWarning)
        cluster.apply(no_queue=True)


def _plan(cluster: Cluster, *, diff: bool = False) -> Plan:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueueOptOutWarning)
        return cluster.diff(no_queue=True) if diff else cluster.apply(no_queue=True, dry_run=True)


def test_dry_run_of_a_new_cluster_writes_nothing_and_shows_the_defaults(
    backend: ClusterBackend, client: Client
) -> None:
    plan = _plan(_cluster(client, 2))
    assert backend.get("rayclusters", "rc", client.namespace) is None
    (change,) = plan.changes
    assert change.action == "create" and change.live is None
    assert plan.exit_code == 1
    assert plan.summary() == "raycluster.ray.io/rc created (server dry run)\n"
    # KubeRay's CRD defaults what flarekit does not send; the server's answer says so
    assert change.defaults["spec.workerGroupSpecs[0].numOfHosts"] == 1
    metadata = change.result["metadata"]
    assert isinstance(metadata, dict) and metadata["uid"]
    text = str(plan)
    assert text.startswith("diff -u -N live/ray.io.v1.RayCluster.")
    assert "+    replicas: 2\n" in text


def test_diff_after_changing_one_worker_count_shows_exactly_that_field(
    backend: ClusterBackend, client: Client
) -> None:
    _apply(_cluster(client, 2))
    stored = backend.get("rayclusters", "rc", client.namespace)
    assert stored is not None
    version = stored["metadata"]["resourceVersion"]

    same = _plan(_cluster(client, 2), diff=True)
    assert [c.action for c in same] == ["unchanged"]
    assert same.exit_code == 0 and str(same) == ""

    changed = _plan(_cluster(client, 3), diff=True)
    (change,) = changed.changes
    assert change.action == "update"
    assert change.changed_fields == ("spec.workerGroupSpecs[0].replicas",)
    assert changed.exit_code == 1
    lines = str(changed).splitlines()
    removed = [line for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line for line in lines if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-    replicas: 2"] and added == ["+    replicas: 3"]
    assert "configured (server dry run)" in changed.summary()

    after = backend.get("rayclusters", "rc", client.namespace)
    assert after is not None and after["metadata"]["resourceVersion"] == version
    assert after["spec"]["workerGroupSpecs"][0]["replicas"] == 2
