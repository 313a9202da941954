"""Listing 1,000 RayClusters: typed models through flarekit vs dicts through CustomObjectsApi.

Both clients talk to the same FakeCluster over HTTPS, with the same kubeconfig; the objects
are seeded straight into its store. Each measurement is the median of several runs after a
warm-up (the warm-up pays for building the RayCluster validator once). The decode-only rows
take the HTTP server out: the same response bytes, validated into models vs `json.loads`.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

COUNT = 1000
RUNS = 7


def _raycluster(name: str, namespace: str) -> dict[str, Any]:
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


def _medians(cases: dict[str, Callable[[], int]], runs: int = RUNS) -> dict[str, float]:
    """Median seconds per case. Cases run interleaved, one round at a time, so a busy
    machine slows all of them alike and the ratios stay meaningful."""
    for fn in cases.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            gc.collect()
            gc.disable()  # as timeit does: collector pauses are noise, not cost of the case
            try:
                start = time.perf_counter()
                count = fn()
                times[name].append(time.perf_counter() - start)
            finally:
                gc.enable()
            if count != COUNT:
                raise RuntimeError(f"{name}: expected {COUNT} objects, got {count}")
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> list[dict[str, str]]:
    import kubernetes

    from flarekit import Client, from_kubeconfig
    from flarekit._codec import ResourceList
    from flarekit.testing import FakeCluster
    from flarekit_models._crds import default_releases
    from flarekit_models.ray.v1 import RayCluster

    namespace = "bench"
    with FakeCluster(releases={"kuberay": default_releases()["kuberay"]}) as fc:
        fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for i in range(COUNT):
            fc.create(_raycluster(f"rc-{i:04d}", namespace))
        typed = Client(from_kubeconfig(fc.kubeconfig_path))
        api = kubernetes.client.CustomObjectsApi(fc.api_client())

        def plain() -> int:
            body = api.list_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters")
            return len(body["items"])

        def models(page_size: int) -> Callable[[], int]:
            return lambda: len(
                list(typed.list(RayCluster, namespace=namespace, page_size=page_size))
            )

        raw = json.dumps(fc.list_response("rayclusters", namespace)).encode()
        page_model = ResourceList[RayCluster]

        results = _medians(
            {
                "CustomObjectsApi -> dicts (1 request)": plain,
                "flarekit -> RayCluster models (1 request)": models(COUNT),
                "flarekit -> RayCluster models (pages of 500)": models(500),
                "decode only: json.loads": lambda: len(json.loads(raw)["items"]),
                "decode only: validate bytes into models": lambda: len(
                    page_model.model_validate_json(raw).items or []
                ),
            }
        )
        typed.close()
        api.api_client.close()

    base = results["CustomObjectsApi -> dicts (1 request)"]
    decode_base = results["decode only: json.loads"]
    rows = []
    for name, seconds in results.items():
        reference = decode_base if name.startswith("decode") else base
        rows.append(
            {
                "measurement": name,
                "objects": str(COUNT),
                "median ms": f"{seconds * 1000:.1f}",
                "ratio": f"{seconds / reference:.2f}x",
            }
        )
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(main()))
