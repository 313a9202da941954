"""A FakeCluster serving RayClusters, in a process of its own, for the list benchmark.

``python -m benchmarks.list_server 100 1000`` starts FakeCluster with the default KubeRay
release, seeds namespace ``bench-<n>`` with n RayClusters for each n given, prints one JSON
line (``{"kubeconfig": ..., "namespaces": {...}}``) and serves until its standard input
closes. A client then pays what a real client pays: the server's work happens in another
process, and the client's heap holds only what the client made.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def raycluster(name: str, namespace: str) -> dict[str, Any]:
    """A RayCluster the size of a typical one: a head and one worker group."""

    def pod(name: str, cpu: str) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"app": "bench"}},
            "spec": {
                "containers": [
                    {
                        "name": name,
                        "image": "rayproject/ray:2.40.0",
                        "ports": [{"containerPort": 6379, "name": "gcs"}],
                        "resources": {
                            "limits": {"cpu": cpu, "memory": "8Gi"},
                            "requests": {"cpu": cpu, "memory": "8Gi"},
                        },
                        "env": [{"name": "RAY_LOG_TO_STDERR", "value": "1"}],
                    }
                ]
            },
        }

    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, "labels": {"team": "bench"}},
        "spec": {
            "rayVersion": "2.40.0",
            "headGroupSpec": {"rayStartParams": {"dashboard-host": "0.0.0.0"},
                              "template": pod("ray-head", "2")},
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": 4,
                    "minReplicas": 1,
                    "maxReplicas": 8,
                    "rayStartParams": {},
                    "template": pod("ray-worker", "4"),
                }
            ],
        },
    }  # fmt: skip


def main(counts: list[int]) -> int:
    from flarekit_models._crds import default_releases
    from flarekit_testing import FakeCluster

    with FakeCluster(releases={"kuberay": default_releases()["kuberay"]}) as fc:
        namespaces = {}
        for count in counts:
            namespace = f"bench-{count}"
            fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
            for i in range(count):
                fc.create(raycluster(f"rc-{i:05d}", namespace))
            namespaces[str(count)] = namespace
        ready = {"kubeconfig": str(fc.kubeconfig_path), "namespaces": namespaces}
        print(json.dumps(ready), flush=True)
        sys.stdin.read()  # serve until the benchmark closes our standard input
    return 0


if __name__ == "__main__":
    sys.exit(main([int(arg) for arg in sys.argv[1:]]))
