"""Shared pieces of the training-job tests: a FakeCluster with Trainer (or the training
operator), Kueue queues, a small hand-written runtime, and a client pointed at it."""

from __future__ import annotations

from typing import Any

from flarekit import Client, from_kubeconfig
from flarekit.testing import FakeCluster

JSON = dict[str, Any]
TICK = 0.02


def client_for(fc: FakeCluster) -> Client:
    return Client(from_kubeconfig(fc.kubeconfig_path), namespace="default")


def torch_runtime(name: str = "torch-distributed", image: str = "example.com/torch:1") -> JSON:
    """A ClusterTrainingRuntime with the torch policy and one `node` replicated job."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": name, "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {
                                    "labels": {
                                        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                    }
                                },
                                "spec": {
                                    "template": {
                                        "spec": {"containers": [{"name": "node", "image": image}]}
                                    }
                                },
                            },
                        }
                    ]
                }
            },
        },
    }


def kueue_queues(fc: FakeCluster, namespace: str = "default", queue: str = "lq") -> None:
    """ResourceFlavor `flavor`, ClusterQueue `cq` and LocalQueue `queue` in `namespace`."""
    api = "kueue.x-k8s.io/" + fc.resource("clusterqueues").storage_version
    fc.create({"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "flavor"}})
    covered = ["cpu", "memory", "nvidia.com/gpu"]
    quotas = [{"name": r, "nominalQuota": "64"} for r in covered]
    fc.create(
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": covered,
                        "flavors": [{"name": "flavor", "resources": quotas}],
                    }
                ],
            },
        }
    )
    fc.create(
        {
            "apiVersion": api,
            "kind": "LocalQueue",
            "metadata": {"name": queue, "namespace": namespace},
            "spec": {"clusterQueue": "cq"},
        }
    )


def creates(fc: FakeCluster, plural: str) -> int:
    """POSTs that reached the collection `plural` (any namespace), whatever the answer."""
    return sum(1 for r in fc.requests if r.method == "POST" and r.path.endswith("/" + plural))
