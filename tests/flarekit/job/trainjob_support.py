"""Shared pieces of the training-job tests: a small hand-written runtime, and counting the
creations a server saw."""

from __future__ import annotations

from typing import Any

from flarekit_testing import FakeCluster

JSON = dict[str, Any]
TICK = 0.02


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


def creates(fc: FakeCluster, plural: str) -> int:
    """POSTs that reached the collection `plural` (any namespace), whatever the answer."""
    return sum(1 for r in fc.requests if r.method == "POST" and r.path.endswith("/" + plural))
