"""One practice-style FakeCluster for the CLI tests: simulated operators on short timings,
a Kueue ResourceFlavor and ClusterQueue, and a torch runtime. Each test makes its own
namespace (with a default LocalQueue) so the tests do not see each other's objects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cli_support import torch_runtime

from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from kube_support import cluster_queue, local_queue, new_namespace


@pytest.fixture(scope="package")
def fake() -> Iterator[FakeCluster]:
    with FakeCluster(
        tick_interval=0.02,
        controllers=[
            KueueController(),
            RayClusterController(ready_after=0.05),
            RayJobController(run_for=0.1),
            TrainJobController(run_for=0.1),
            AppWrapperController(),
        ],
    ) as fc:
        cluster_queue(fc)
        fc.create(torch_runtime())
        yield fc


@pytest.fixture
def namespace(fake: FakeCluster) -> str:
    """A fresh namespace with a LocalQueue `lq` marked as its default."""
    name = new_namespace(fake, "cli")
    local_queue(fake, name, default=True)
    return name
