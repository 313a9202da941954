"""One practice-style FakeCluster for the CLI tests: simulated operators on short timings,
a Kueue ResourceFlavor and ClusterQueue, and a torch runtime. Each test makes its own
namespace (with a default LocalQueue) so the tests do not see each other's objects."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from cli_support import kueue_api, torch_runtime

from flarekit.testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)

_names = itertools.count()


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
        api = kueue_api(fc)
        fc.create({"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "flavor"}})
        quota = [{"name": r, "nominalQuota": "1000"} for r in ("cpu", "memory")]
        fc.create(
            {
                "apiVersion": api,
                "kind": "ClusterQueue",
                "metadata": {"name": "cq"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [{"name": "flavor", "resources": quota}],
                        }
                    ],
                },
            }
        )
        fc.create(torch_runtime())
        yield fc


@pytest.fixture
def namespace(fake: FakeCluster) -> str:
    """A fresh namespace with a LocalQueue `lq` marked as its default."""
    name = f"cli{next(_names)}"
    fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    fake.create(
        {
            "apiVersion": kueue_api(fake),
            "kind": "LocalQueue",
            "metadata": {
                "name": "lq",
                "namespace": name,
                "annotations": {"kueue.x-k8s.io/default-queue": "true"},
            },
            "spec": {"clusterQueue": "cq"},
        }
    )
    return name
