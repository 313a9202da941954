"""FakeCluster's own cost: start-up, GETs and creates per second, paged vs unpaged lists.

FakeCluster is the embedded default and the test backend, so its start-up and per-request
cost are paid by every test. Requests go from one thread over one keep-alive HTTPS
connection (urllib3, as the official client uses), so the figures are the server's cost plus
a thin client. `/version` (no store, no admission) is the floor every request pays; ratios
are against it, or for paged lists against one unpaged list of the same objects.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.list_server import raycluster as _raycluster

STARTS = 5
REQUESTS = 300
LIST_SIZES = (100, 1000, 10000)
PAGE = 500


def _median(fn: Callable[[], Any], runs: int, warm_up: bool = True) -> float:
    if warm_up:
        fn()
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _Http:
    """One keep-alive HTTPS connection with the admin token."""

    def __init__(self, fc: Any) -> None:
        import urllib3

        self._pool = urllib3.HTTPSConnectionPool(
            "127.0.0.1", fc.port, maxsize=1, ca_certs=str(fc.ca_path), assert_hostname=False
        )
        self._headers = {"Authorization": f"Bearer {fc.token}", "Accept": "application/json"}

    def call(self, method: str, path: str, body: Any = None) -> Any:
        headers = dict(self._headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        reply = self._pool.request(method, path, body=data, headers=headers)
        if reply.status >= 300:
            raise RuntimeError(f"{method} {path}: {reply.status} {reply.data[:200]!r}")
        return json.loads(reply.data)

    def close(self) -> None:
        self._pool.close()


def _startup() -> float:
    from flarekit_testing import FakeCluster

    def once() -> None:
        with FakeCluster():
            pass

    return _median(once, STARTS)


def _per_request(fc: Any, http: _Http) -> dict[str, float]:
    """Seconds per request for /version, GET of one RayCluster, and create of a RayCluster."""
    base = "/apis/ray.io/v1/namespaces/bench/rayclusters"
    fc.create(_raycluster("one", "bench"))
    counter = iter(range(10**9))

    def versions() -> None:
        for _ in range(REQUESTS):
            http.call("GET", "/version")

    def gets() -> None:
        for _ in range(REQUESTS):
            http.call("GET", f"{base}/one")

    def creates() -> None:
        for _ in range(REQUESTS):
            http.call("POST", base, _raycluster(f"c-{next(counter)}", "bench"))

    return {
        "version": _median(versions, 3) / REQUESTS,
        "get": _median(gets, 3) / REQUESTS,
        "create": _median(creates, 3) / REQUESTS,
    }


def _lists(fc: Any, http: _Http) -> list[tuple[int, float, float]]:
    """(objects, unpaged seconds, paged seconds) per size, each in its own namespace."""
    out = []
    for size in LIST_SIZES:
        namespace = f"list-{size}"
        fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for i in range(size):
            fc.create(_raycluster(f"rc-{i:05d}", namespace))
        path = f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters"

        def unpaged(path: str = path, size: int = size) -> None:
            got = len(http.call("GET", path)["items"])
            assert got == size, got

        def paged(path: str = path, size: int = size) -> None:
            got, token = 0, ""
            while True:
                query = f"?limit={PAGE}" + (f"&continue={token}" if token else "")
                body = http.call("GET", path + query)
                got += len(body["items"])
                token = body["metadata"].get("continue") or ""
                if not token:
                    break
            assert got == size, got

        big = size >= 10000  # one run each: the objects are already warm from seeding
        runs = 1 if big else 3
        out.append((size, _median(unpaged, runs, not big), _median(paged, runs, not big)))
    return out


def main() -> list[dict[str, str]]:
    from flarekit_testing import FakeCluster

    rows: list[dict[str, str]] = []
    start = _startup()
    rows.append(
        {
            "measurement": "start-up (default releases)",
            "result": f"{start * 1000:.0f} ms",
            "ratio": "",
        }
    )
    with FakeCluster() as fc:
        fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
        http = _Http(fc)
        try:
            per = _per_request(fc, http)
            for name, label in (
                ("version", "GET /version (floor)"),
                ("get", "GET one RayCluster"),
                ("create", "create a RayCluster"),
            ):
                rows.append(
                    {
                        "measurement": label,
                        "result": f"{1 / per[name]:.0f}/s",
                        "ratio": f"{per[name] / per['version']:.2f}x floor",
                    }
                )
            for size, unpaged, paged in _lists(fc, http):
                rows.append(
                    {
                        "measurement": f"list {size} RayClusters, one request",
                        "result": f"{unpaged * 1000:.1f} ms",
                        "ratio": "",
                    }
                )
                rows.append(
                    {
                        "measurement": f"list {size} RayClusters, pages of {PAGE}",
                        "result": f"{paged * 1000:.1f} ms",
                        "ratio": f"{paged / unpaged:.2f}x unpaged",
                    }
                )
        finally:
            http.close()
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(main()))
