"""A FakeCluster with simulated KubeRay, Kueue and AppWrapper controllers for the facade tests.

Controllers tick every 20 ms and clusters become ready at once, so a whole apply -> ready ->
down cycle takes a few ticks; waits poll every 10 ms and never show progress.
"""

from __future__ import annotations

import itertools
from typing import Any, TypedDict

from flarekit import Client, RetryPolicy, from_kubeconfig
from flarekit.testing import FakeCluster

TICK = 0.02


class Fast(TypedDict):
    poll: float
    max_poll: float
    progress: bool


FAST: Fast = {"poll": 0.01, "max_poll": 0.05, "progress": False}
FAST_RETRY = RetryPolicy(attempts=2, backoff=0.001, max_backoff=0.01)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"

_names = itertools.count()


def client_for(fc: FakeCluster) -> Client:
    return Client(from_kubeconfig(fc.kubeconfig_path), retry=FAST_RETRY)


def new_namespace(fc: FakeCluster) -> str:
    name = f"f{next(_names)}"
    fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def kueue_api(fc: FakeCluster) -> str:
    return "kueue.x-k8s.io/" + fc.resource("clusterqueues").storage_version


def make_queues(fc: FakeCluster, namespace: str, *local_queues: str) -> None:
    """A ResourceFlavor and a ClusterQueue (once), and LocalQueues in `namespace`."""
    api = kueue_api(fc)
    if fc.get("resourceflavors", "flavor") is None:
        fc.create({"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "flavor"}})
        resources = ["cpu", "memory", "nvidia.com/gpu"]
        quota = [{"name": r, "nominalQuota": "1000"} for r in resources]
        fc.create(
            {
                "apiVersion": api,
                "kind": "ClusterQueue",
                "metadata": {"name": "cq"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": resources,
                            "flavors": [{"name": "flavor", "resources": quota}],
                        }
                    ],
                },
            }
        )
    for name in local_queues:
        fc.create(
            {
                "apiVersion": api,
                "kind": "LocalQueue",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"clusterQueue": "cq"},
            }
        )


def writes(fc: FakeCluster) -> int:
    """Requests that change something (anything but GET)."""
    return sum(1 for r in fc.requests if r.method != "GET")


def raw_raycluster(name: str, namespace: str, workers: int = 2, **meta: Any) -> dict[str, Any]:
    """A RayCluster as someone might write it by hand, not through flarekit."""
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {
            "rayVersion": "2.9.0",
            "headGroupSpec": {
                "rayStartParams": {"dashboard-host": "0.0.0.0"},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-head",
                                "image": "rayproject/ray:2.9.0",
                                "resources": {
                                    "requests": {"cpu": "1", "memory": "2Gi"},
                                    "limits": {"cpu": "2", "memory": "2Gi"},
                                },
                            }
                        ]
                    }
                },
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small",
                    "replicas": workers,
                    "minReplicas": 0,
                    "maxReplicas": 5,
                    "rayStartParams": {},
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-worker",
                                    "image": "rayproject/ray:2.9.0",
                                    "resources": {
                                        "requests": {"cpu": "500m", "memory": "1Gi"},
                                        "limits": {"cpu": "500m", "memory": "1Gi"},
                                    },
                                }
                            ]
                        }
                    },
                }
            ],
        },
    }
