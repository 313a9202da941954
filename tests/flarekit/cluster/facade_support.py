"""Timings and a hand-written RayCluster for the cluster facade tests.

The simulated controllers tick every 20 ms and clusters become ready at once, so a whole
apply -> ready -> down cycle takes a few ticks; waits poll every 10 ms and never show progress.
"""

from __future__ import annotations

from typing import Any, TypedDict

TICK = 0.02


class Fast(TypedDict):
    poll: float
    max_poll: float
    progress: bool


FAST: Fast = {"poll": 0.01, "max_poll": 0.05, "progress": False}


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
