"""FakeCluster's own cost: start-up, GETs, creates and applies per second, paged lists.

FakeCluster is the embedded default and the test backend, so its start-up and per-request
cost are paid by every test. Requests go from one thread over one keep-alive HTTPS
connection (urllib3, as the official client uses), so the figures are the server's cost plus
a thin client. `/version` (no store, no admission) is the floor every request pays; ratios
are against it, or for paged lists against one unpaged list of the same objects. Creates and
applies are also measured, in the same run and in fresh processes taking turns, against the
FakeCluster of a baseline commit (``FLAREKIT_BENCH_FAKECLUSTER_BASELINE``, default the commit
that made flarekit-testing its own distribution; built by ``baseline_tree``).
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.list_server import raycluster as _raycluster

#: The first commit with flarekit_testing: the FakeCluster the write rates are compared with.
DEFAULT_BASELINE = "34d05e9"
BASELINE_ENV = "FLAREKIT_BENCH_FAKECLUSTER_BASELINE"
WRITE_ROUNDS = 5

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

    def apply(self, path: str, body: Any) -> Any:
        """A server-side apply (force, field manager "bench") of a JSON body."""
        headers = {**self._headers, "Content-Type": "application/apply-patch+yaml"}
        reply = self._pool.request(
            "PATCH",
            path + "?fieldManager=bench&force=true",
            body=json.dumps(body).encode(),
            headers=headers,
        )
        if reply.status >= 300:
            raise RuntimeError(f"apply {path}: {reply.status} {reply.data[:200]!r}")
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

    def applies() -> None:
        for i in range(REQUESTS):
            name = f"a-{i % 50}"  # a new object, then changes to existing ones
            http.apply(f"{base}/{name}", _applied(name, next(counter)))

    return {
        "version": _median(versions, 3) / REQUESTS,
        "get": _median(gets, 3) / REQUESTS,
        "create": _median(creates, 3) / REQUESTS,
        "apply": _median(applies, 3) / REQUESTS,
    }


def _applied(name: str, serial: int) -> dict[str, Any]:
    """A RayCluster as a client applies it (server-side apply, JSON body)."""
    obj = _raycluster(name, "bench")
    obj["metadata"]["labels"]["serial"] = str(serial)
    for group in [obj["spec"]["headGroupSpec"], *obj["spec"]["workerGroupSpecs"]]:
        for container in group["template"]["spec"]["containers"]:
            for port in container["ports"]:
                port["protocol"] = "TCP"
    return obj


def write_rates() -> dict[str, float]:
    """Creates and applies per second of this process's FakeCluster (with its operators)."""
    from flarekit_testing import FakeCluster

    with FakeCluster() as fc:
        fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
        http = _Http(fc)
        try:
            per = _per_request(fc, http)
        finally:
            http.close()
    return {name: 1 / seconds for name, seconds in per.items()}


def _rates_in(tree: Any) -> dict[str, float]:
    import os
    import subprocess
    import sys

    code = "import json\nfrom benchmarks.bench_fakecluster import write_rates\n"
    code += "print(json.dumps(write_rates()))"
    paths = [tree.python_path, str(tree.root / "testing"), os.getcwd()]
    env = {**tree.env(), "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["?"])[-1])
    rates: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return rates


def against_baseline() -> list[dict[str, str]]:
    """Creates and applies per second, this tree against the baseline's, taking turns."""
    import os

    from benchmarks.baseline_tree import BaselineError, prepare, working_tree

    rev = os.environ.get(BASELINE_ENV) or DEFAULT_BASELINE
    try:
        baseline = prepare(rev)
    except BaselineError as why:
        return [{"measurement": f"baseline {rev}", "result": f"NOT MEASURED: {why}", "ratio": ""}]
    trees = [working_tree(), baseline]
    samples: dict[str, list[dict[str, float]]] = {t.label: [] for t in trees}
    for i in range(WRITE_ROUNDS):
        for tree in trees if i % 2 == 0 else reversed(trees):
            samples[tree.label].append(_rates_in(tree))
    rows = []
    for kind in ("create", "apply"):
        ours = statistics.median(r[kind] for r in samples["current"])
        theirs = statistics.median(r[kind] for r in samples[baseline.label])
        rows.append(
            {
                "measurement": f"{kind} a RayCluster: this tree / baseline {baseline.label} "
                f"(median of {WRITE_ROUNDS} processes each)",
                "result": f"{ours:.0f}/s / {theirs:.0f}/s",
                "ratio": f"{ours / theirs:.2f}x baseline",
            }
        )
    return rows


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
                ("apply", "apply a RayCluster (server-side apply)"),
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
    return rows + against_baseline()


if __name__ == "__main__":
    from benchmarks.__main__ import table

    print(table(main()))
