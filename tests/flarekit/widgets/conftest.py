"""A FakeCluster with the simulated operators for the notebook widget tests: clusters become
ready at once (those named ``broken*`` fail), RayJobs run for a minute; ClusterQueue
``plenty`` admits everything, and ClusterQueue ``none`` does not exist, so what is queued to it
waits."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from flarekit import Client, RetryPolicy, from_kubeconfig
from flarekit.testing import FakeCluster, KueueController, RayClusterController, RayJobController

_names = itertools.count()


def _kueue_api(fc: FakeCluster) -> str:
    return "kueue.x-k8s.io/" + fc.resource("clusterqueues").storage_version


@pytest.fixture(scope="package")
def fake() -> Iterator[FakeCluster]:
    controllers = [
        KueueController(),
        RayClusterController(
            fail_after=0.0, fail_when=lambda obj: obj["metadata"]["name"].startswith("broken")
        ),
        RayJobController(run_for=60),
    ]
    with FakeCluster(tick_interval=0.02, controllers=controllers) as fc:
        api = _kueue_api(fc)
        fc.create({"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "flavor"}})
        resources = [{"name": r, "nominalQuota": "1000"} for r in ("cpu", "memory")]
        group = {
            "coveredResources": ["cpu", "memory"],
            "flavors": [{"name": "flavor", "resources": resources}],
        }
        fc.create(
            {
                "apiVersion": api,
                "kind": "ClusterQueue",
                "metadata": {"name": "plenty"},
                "spec": {"namespaceSelector": {}, "resourceGroups": [group]},
            }
        )
        yield fc


@pytest.fixture(scope="package")
def client(fake: FakeCluster) -> Client:
    return Client(
        from_kubeconfig(fake.kubeconfig_path),
        retry=RetryPolicy(attempts=2, backoff=0.001, max_backoff=0.01),
    )


@pytest.fixture
def namespace(fake: FakeCluster) -> str:
    """A fresh namespace with LocalQueues `default` (admits everything) and `waiting` (on the
    missing ClusterQueue `none`: what is queued to it waits)."""
    name = f"nb{next(_names)}"
    fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    for queue, cluster_queue in (("default", "plenty"), ("waiting", "none")):
        fake.create(
            {
                "apiVersion": _kueue_api(fake),
                "kind": "LocalQueue",
                "metadata": {"name": queue, "namespace": name},
                "spec": {"clusterQueue": cluster_queue},
            }
        )
    return name
