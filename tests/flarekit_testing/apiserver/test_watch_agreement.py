"""Watches as kube-apiserver answers them, on FakeCluster and on the real control plane: a
resourceVersion older than the watch cache, the bookmark that ends the initial events, the
bookmarks before a short watch ends, and watched tables."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from agreement_support import send

from wait_support import wait_until

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
JSON = dict[str, Any]


def events(server: Any, path: str, query: str, **headers: str) -> list[JSON]:
    answer = send(server, "GET", f"{path}?watch=1&{query}", **headers)
    assert answer.status == 200, answer.text
    return [json.loads(line) for line in answer.text.splitlines() if line]


def configmap(name: str, **data: str) -> JSON:
    return {"metadata": {"name": name}, "data": data}


def test_a_watch_from_a_version_older_than_the_cache_is_expired(
    api_server: Any, api_namespace: str
) -> None:
    path = f"/api/v1/namespaces/{api_namespace}/configmaps"
    found = events(api_server, path, "resourceVersion=1&timeoutSeconds=2")
    assert [e["type"] for e in found] == ["ERROR"]
    assert found[0]["object"]["code"] == 410 and found[0]["object"]["reason"] == "Expired"
    assert found[0]["object"]["message"].startswith("too old resource version: 1 (")


def test_initial_events_end_with_a_bookmark(api_server: Any, api_namespace: str) -> None:
    """kubectl wait and client-go's watch lists wait for this bookmark before they look."""
    path = f"/api/v1/namespaces/{api_namespace}/configmaps"
    send(api_server, "POST", path, configmap("a", k="v"))
    # The controller manager publishes kube-root-ca.crt into a new namespace a moment later.
    wait_until(lambda: send(api_server, "GET", f"{path}/kube-root-ca.crt").status == 200, "CA")
    for query in (
        "allowWatchBookmarks=true",
        "allowWatchBookmarks=true&resourceVersion=0",
        "allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
    ):
        found = events(api_server, path, query + "&timeoutSeconds=1")
        # (the real server may add a bookmark of its own before the watch ends)
        kinds = [e["type"] for e in found]
        assert kinds[:3] == ["ADDED", "ADDED", "BOOKMARK"] and set(kinds[3:]) <= {"BOOKMARK"}
        mark = found[2]["object"]["metadata"]
        assert mark["annotations"] == {"k8s.io/initial-events-end": "true"}, query
        assert int(mark["resourceVersion"]) >= max(
            int(e["object"]["metadata"]["resourceVersion"]) for e in found[:2]
        )
    plain = events(api_server, path, "timeoutSeconds=1")
    assert [e["type"] for e in plain] == ["ADDED", "ADDED"]


def _ticking(server: Any, path: str, seconds: float) -> threading.Thread:
    def tick() -> None:
        deadline = time.monotonic() + seconds
        n = 0
        while time.monotonic() < deadline:
            n += 1
            patch = {"data": {"n": str(n)}}
            send(server, "PATCH", f"{path}/ticker", patch, "application/merge-patch+json")
            time.sleep(0.3)

    return threading.Thread(target=tick, daemon=True)


def test_a_short_watch_gets_a_bookmark_before_it_ends(api_server: Any, api_namespace: str) -> None:
    path = f"/api/v1/namespaces/{api_namespace}/configmaps"
    made = send(api_server, "POST", path, configmap("ticker", n="0")).body
    since = made["metadata"]["resourceVersion"]
    ticker = _ticking(api_server, path, 4.0)
    ticker.start()
    try:
        query = f"allowWatchBookmarks=true&resourceVersion={since}&timeoutSeconds=4"
        found = events(api_server, path, query)
    finally:
        ticker.join()
    marks = [e["object"] for e in found if e["type"] == "BOOKMARK"]
    assert marks and {e["type"] for e in found} == {"MODIFIED", "BOOKMARK"}
    assert all(set(m) == {"kind", "apiVersion", "metadata"} for m in marks)
    assert all(set(m["metadata"]) == {"resourceVersion"} for m in marks)


def test_watched_tables_name_their_columns_once(api_server: Any, api_namespace: str) -> None:
    """Every event of a watch that asks for tables is a one-row Table; only the first names
    the columns (kubectl get -w prints every row under that header)."""
    path = f"/api/v1/namespaces/{api_namespace}/configmaps"
    send(api_server, "POST", path, configmap("a", k="v"))
    made = send(api_server, "POST", path, configmap("b", k="v")).body
    patch = {"data": {"w": "x"}}
    send(api_server, "PATCH", f"{path}/b", patch, "application/merge-patch+json")
    query = f"resourceVersion={made['metadata']['resourceVersion']}&timeoutSeconds=1"
    found = events(api_server, path, query, Accept=TABLE)
    assert [e["type"] for e in found] == ["MODIFIED"]
    table = found[0]["object"]
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert table["rows"][0]["cells"][:2] == ["b", 2]
    found = events(api_server, path, "timeoutSeconds=1", Accept=TABLE)
    assert [e["type"] for e in found] == ["ADDED"] * 3
    assert [len(e["object"]["columnDefinitions"] or ()) for e in found] == [3, 0, 0]
    assert [e["object"]["columnDefinitions"] is None for e in found] == [False, True, True]
    assert all(len(e["object"]["rows"]) == 1 for e in found)
