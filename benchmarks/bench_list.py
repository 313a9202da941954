"""Listing 100 to 10,000 RayClusters: typed models through flarekit vs dicts through CustomObjectsApi.

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
import tracemalloc
from collections.abc import Callable
from functools import partial
from typing import Any

COUNTS = (100, 1_000, 10_000)
RUNS = 5


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


def _medians(cases: dict[str, Callable[[], int]], count: int, runs: int) -> dict[str, float]:
    """Median seconds per case. Cases run interleaved, one round at a time, so a busy
    machine slows all of them alike and the ratios stay meaningful. The garbage collector
    runs as it does in a user's program (its pauses are part of the cost of holding many
    objects); each run starts from a collected heap."""
    for fn in cases.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            gc.collect()
            start = time.perf_counter()
            got = fn()
            times[name].append(time.perf_counter() - start)
            if got != count:
                raise RuntimeError(f"{name}: expected {count} objects, got {got}")
    return {name: statistics.median(values) for name, values in times.items()}


def _held_bytes(make: Callable[[], object]) -> int:
    """Bytes still allocated while the result of `make()` is held."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = make()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del held
    return after - before


def _loads(raw: bytes) -> int:
    return len(json.loads(raw)["items"])


def _decode(page_model: Any, raw: bytes) -> int:
    from flarekit.client._codec import decode_page

    return len(decode_page(page_model, raw).items or [])


def _validate(page_model: Any, raw: bytes) -> int:
    return len(page_model.model_validate_json(raw).items or [])


def main() -> list[dict[str, str]]:
    import kubernetes

    from flarekit import Client, from_kubeconfig
    from flarekit.client._codec import ResourceList, decode_page
    from flarekit_models._crds import default_releases
    from flarekit_models.ray.v1 import RayCluster
    from flarekit_testing import FakeCluster

    rows = []
    with FakeCluster(releases={"kuberay": default_releases()["kuberay"]}) as fc:
        typed = Client(from_kubeconfig(fc.kubeconfig_path))
        api = kubernetes.client.CustomObjectsApi(fc.api_client())
        page_model = ResourceList[RayCluster]
        for count in COUNTS:
            namespace = f"bench-{count}"
            fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
            for i in range(count):
                fc.create(_raycluster(f"rc-{i:05d}", namespace))

            def plain(namespace: str = namespace) -> int:
                body = api.list_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters")
                return len(body["items"])

            def models(page_size: int, namespace: str = namespace) -> Callable[[], int]:
                return lambda: len(
                    list(typed.list(RayCluster, namespace=namespace, page_size=page_size))
                )

            raw = json.dumps(fc.list_response("rayclusters", namespace)).encode()
            cases: dict[str, Callable[[], int]] = {
                "CustomObjectsApi -> dicts (1 request)": plain,
                "flarekit -> RayCluster models (1 request)": models(count),
                # FakeCluster pages by re-reading its store for each page, which grows
                # with the list; at 10,000 objects that is the server's cost, not the client's.
                **(
                    {"flarekit -> RayCluster models (pages of 500)": models(500)}
                    if count < 10_000
                    else {}
                ),
                "decode only: json.loads": partial(_loads, raw),
                "decode only: validate bytes into models": partial(_decode, page_model, raw),
                "decode only: the same, collector not paused": partial(_validate, page_model, raw),
            }
            results = _medians(cases, count, RUNS if count < 10_000 else 3)
            base = results["CustomObjectsApi -> dicts (1 request)"]
            decode_base = results["decode only: json.loads"]
            for name, seconds in results.items():
                reference = decode_base if name.startswith("decode") else base
                rows.append(
                    {
                        "measurement": name,
                        "objects": str(count),
                        "median ms": f"{seconds * 1000:.1f}",
                        "us per object": f"{seconds / count * 1e6:.1f}",
                        "ratio": f"{seconds / reference:.2f}x",
                    }
                )
            if count == COUNTS[-1]:
                dicts = _held_bytes(partial(json.loads, raw))
                held = _held_bytes(partial(decode_page, page_model, raw))
                for name, size, reference in (
                    ("memory held: dicts (json.loads)", dicts, dicts),
                    ("memory held: RayCluster models", held, dicts),
                ):
                    rows.append(
                        {
                            "measurement": name,
                            "objects": str(count),
                            "median ms": f"{size / 2**20:.1f} MiB",
                            "us per object": f"{size / count / 1024:.1f} KiB",
                            "ratio": f"{size / reference:.2f}x",
                        }
                    )
        typed.close()
        api.api_client.close()
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(main()))
