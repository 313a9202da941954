"""Listing 100 to 10,000 RayClusters: typed models through flarekit vs dicts through CustomObjectsApi.

The server (FakeCluster, ``benchmarks.list_server``) runs in a process of its own, as a real
API server does, so each client pays only its own work and its heap holds only what it made.
Both clients use the same kubeconfig. Anchors measured in the same run: ``CustomObjectsApi``
for whole lists; for decoding alone, the same response bytes read by ``json.loads`` (plain
dicts) and by datamodel-code-generator's pydantic models of the same CRD
(``benchmarks.dmcg_models``); for memory, the dicts. Every timed call is followed by the
collection of the young generation it leaves (inside the timing): a decoder that pauses the
garbage collector cannot leave its cost to the caller's next allocation. Whole lists: median
wall time of several runs (two processes work); decoding alone: the least CPU time of this
process over several runs (the run least disturbed by the machine's other work). Each after a
warm-up (which builds each validator once), the cases interleaved.
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from typing import Any

COUNTS = (100, 1_000, 10_000)
RUNS = 7
RUNS_LARGE = 3

Row = dict[str, str]


def _timed(
    cases: dict[str, Callable[[], int]], count: int, runs: int, *, cpu: bool = False
) -> dict[str, float]:
    """Seconds per case, the cases interleaved round by round so that a busy machine slows
    all of them alike: the median wall time, or (``cpu``, for work done in this process
    alone) the least CPU time of this process, the run least disturbed by other work."""
    clock = time.process_time if cpu else time.perf_counter
    for fn in cases.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            gc.collect()
            start = clock()
            got = fn()
            gc.collect(0)
            times[name].append(clock() - start)
            if got != count:
                raise RuntimeError(f"{name}: expected {count} objects, got {got}")
    pick = min if cpu else statistics.median
    return {name: pick(values) for name, values in times.items()}


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


def _tracked(make: Callable[[], object], count: int) -> float:
    """Objects the garbage collector tracks per listed object, while the result is held."""
    gc.collect()
    before = len(gc.get_objects())
    held = make()
    after = len(gc.get_objects())
    del held
    return (after - before) / count


def _count_validated(page_model: Any, raw: bytes) -> int:
    return len(page_model.model_validate_json(raw).items)


def _server() -> tuple[subprocess.Popen[str], dict[str, Any]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.list_server", *map(str, COUNTS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise RuntimeError("the list server exited before it was ready")
    return process, json.loads(line)


def _row(name: str, count: int, seconds: float, reference: float, anchor: str) -> Row:
    return {
        "measurement": name,
        "objects": str(count),
        "ms": f"{seconds * 1000:.1f}",
        "us per object": f"{seconds / count * 1e6:.1f}",
        "ratio": f"{seconds / reference:.2f}x {anchor}",
    }


def main() -> list[Row]:
    import kubernetes

    from benchmarks import dmcg_models
    from flarekit import Client, from_kubeconfig
    from flarekit.client._codec import ResourceList, decode_page
    from flarekit_models.ray.v1 import RayCluster

    dmcg, why = dmcg_models.ensure()
    rows: list[Row] = []
    if dmcg is None:
        rows.append({"measurement": "datamodel-code-generator anchor", "objects": "",
                     "ms": f"NOT MEASURED: {why}", "us per object": "", "ratio": ""})  # fmt: skip
        dmcg_list: Any = None
    else:
        from pydantic import ConfigDict, create_model

        dmcg_list = create_model(
            "RayClusterList",
            __config__=ConfigDict(extra="ignore"),
            items=(list[dmcg.RayCluster], ...),  # type: ignore[name-defined]
        )
    process, served = _server()
    try:
        typed = Client(from_kubeconfig(served["kubeconfig"]))
        api = kubernetes.client.CustomObjectsApi(
            kubernetes.config.new_client_from_config(served["kubeconfig"])
        )
        page_model = ResourceList[RayCluster]
        for count in COUNTS:
            namespace = served["namespaces"][str(count)]

            def plain(namespace: str = namespace) -> int:
                body = api.list_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters")
                return len(body["items"])

            def models(page_size: int, namespace: str = namespace) -> Callable[[], int]:
                return lambda: len(
                    list(typed.list(RayCluster, namespace=namespace, page_size=page_size))
                )

            raw = api.api_client.call_api(
                f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters",
                "GET",
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
            ).data

            def loads(raw: bytes = raw) -> int:
                return len(json.loads(raw)["items"])

            def decode(raw: bytes = raw) -> int:
                return len(decode_page(page_model, raw).items or [])

            def decode_and_read(raw: bytes = raw) -> int:
                items = decode_page(page_model, raw).items or []
                for item in items:
                    assert item.metadata is not None and item.spec is not None
                    _ = item.metadata.name, item.spec.worker_group_specs[0].replicas  # type: ignore[index]
                return len(items)

            lists: dict[str, Callable[[], int]] = {
                "CustomObjectsApi -> dicts (1 request)": plain,
                "flarekit Client.list -> RayCluster models (1 request)": models(count),
            }
            if count > 500:
                lists["flarekit Client.list, pages of 500"] = models(500)
            decodes: dict[str, Callable[[], int]] = {
                "decode only: json.loads -> dicts": loads,
                "decode only: flarekit RayCluster models": decode,
                "decode + read name and replicas of each": decode_and_read,
            }
            if dmcg_list is not None:
                decodes["decode only: datamodel-code-generator models"] = partial(
                    _count_validated, dmcg_list, raw
                )
            runs = RUNS if count < 10_000 else RUNS_LARGE
            timed = _timed(lists, count, runs)
            base = timed["CustomObjectsApi -> dicts (1 request)"]
            rows += [_row(n, count, s, base, "CustomObjectsApi") for n, s in timed.items()]
            timed = _timed(decodes, count, runs + 2, cpu=True)
            base = timed["decode only: json.loads -> dicts"]
            rows += [_row(n, count, s, base, "json.loads") for n, s in timed.items()]
            if count == COUNTS[-1]:
                held = {
                    "memory held: dicts (json.loads)": partial(json.loads, raw),
                    "memory held: flarekit RayCluster models": partial(
                        decode_page, page_model, raw
                    ),
                }
                if dmcg_list is not None:
                    held["memory held: datamodel-code-generator models"] = partial(
                        dmcg_list.model_validate_json, raw
                    )
                sizes = {name: _held_bytes(make) for name, make in held.items()}
                dicts = sizes["memory held: dicts (json.loads)"]
                for name, size in sizes.items():
                    tracked = _tracked(held[name], count)
                    rows.append(
                        {
                            "measurement": name,
                            "objects": str(count),
                            "ms": f"{size / 2**20:.1f} MiB",
                            "us per object": f"{size / count / 1024:.1f} KiB, "
                            f"{tracked:.0f} GC-tracked",
                            "ratio": f"{size / dicts:.2f}x dicts",
                        }
                    )
        typed.close()
        api.api_client.close()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)
    if dmcg is not None:
        rows.append({"measurement": f"datamodel-code-generator {dmcg_models.version()}",
                     "objects": "", "ms": "", "us per object": "", "ratio": ""})  # fmt: skip
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(main()))
