"""A FakeCluster with the simulated operators for the notebook widget tests: clusters become
ready at once (those named ``broken*`` fail), RayJobs run for a minute; ClusterQueue
``plenty`` admits everything, and ClusterQueue ``none`` does not exist, so what is queued to it
waits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flarekit import Client
from flarekit_testing import FakeCluster, KueueController, RayClusterController, RayJobController
from kube_support import client_for, cluster_queue, local_queue, new_namespace


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
        cluster_queue(fc, "plenty", quota={"cpu": "1000", "memory": "1000Gi"})
        yield fc


@pytest.fixture(scope="package")
def client(fake: FakeCluster) -> Iterator[Client]:
    with client_for(fake) as c:
        yield c


@pytest.fixture
def namespace(fake: FakeCluster) -> str:
    """A fresh namespace with LocalQueues `default` (admits everything) and `waiting` (on the
    missing ClusterQueue `none`: what is queued to it waits)."""
    name = new_namespace(fake, "nb")
    local_queue(fake, name, "default", "plenty")
    local_queue(fake, name, "waiting", "none")
    return name
