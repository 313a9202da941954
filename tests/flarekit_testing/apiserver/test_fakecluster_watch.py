"""Watches: replay from a resourceVersion, initial state, selectors, bookmarks, 410, drops.

Each watch asks for `timeoutSeconds=1`, so the server ends the stream by itself; most tests hang
up once they have the events they expect. Nothing here asserts on timing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
import urllib3
from fakecluster_support import GROUP, Raw, widget, widget_crd

from flarekit_testing import FakeCluster

JSON = dict[str, Any]


def _events(response: urllib3.BaseHTTPResponse) -> list[JSON]:
    """Every event until the server ends the stream (at timeoutSeconds)."""
    return [json.loads(line) for line in response.data.decode().splitlines() if line]


def _first(response: urllib3.BaseHTTPResponse, count: int, until: str = "") -> list[JSON]:
    """The first `count` events (or up to the first of type `until`), then hang up."""
    events: list[JSON] = []
    buffer = b""
    for chunk in response.read_chunked():
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            events.append(json.loads(line))
            if len(events) == count or (until and events[-1]["type"] == until):
                response.close()
                return events
    return events


def _watch(raw: Raw, ns: str, query: str) -> urllib3.BaseHTTPResponse:
    path = f"/apis/{GROUP}/v1/namespaces/{ns}/widgets?watch=1&timeoutSeconds=1&{query}"
    return raw("GET", path, preload=False)


def _summary(events: list[JSON]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"].get("name", "")) for e in events]


def test_watch_from_resource_version_replays_in_order(api: Any, raw: Raw, ns: str) -> None:
    start = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    api.patch_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", {"spec": {"size": 2}})
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("b"))
    api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    response = _watch(raw, ns, f"resourceVersion={start['metadata']['resourceVersion']}")
    assert response.status == 200
    assert response.headers["Transfer-Encoding"] == "chunked"
    events = _events(response)  # read to the end: nothing else, and no unasked-for bookmarks
    assert _summary(events) == [("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and len(set(versions)) == 3
    assert events[0]["object"]["spec"]["size"] == 2


def test_watch_without_version_starts_with_current_state_then_live(
    api: Any, raw: Raw, ns: str
) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    response = _watch(raw, ns, "")
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("b"))
    assert _summary(_first(response, 2)) == [("ADDED", "a"), ("ADDED", "b")]


def test_resource_version_zero_also_synthesises_added(api: Any, raw: Raw, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    assert _summary(_first(_watch(raw, ns, "resourceVersion=0"), 1)) == [("ADDED", "a")]


def test_object_leaving_the_selector_is_deleted(api: Any, raw: Raw, ns: str) -> None:
    body = widget("a")
    body["metadata"]["labels"] = {"app": "web"}
    start = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    relabel = api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"metadata": {"labels": {"app": "db"}}}
    )
    api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"metadata": {"labels": {"app": "web"}}}
    )
    query = f"labelSelector=app%3Dweb&resourceVersion={start['metadata']['resourceVersion']}"
    events = _first(_watch(raw, ns, query), 2)
    assert _summary(events) == [("DELETED", "a"), ("ADDED", "a")]
    # The DELETED event shows the last state that matched, at the change's resourceVersion.
    assert events[0]["object"]["metadata"]["labels"] == {"app": "web"}
    assert (
        events[0]["object"]["metadata"]["resourceVersion"] == relabel["metadata"]["resourceVersion"]
    )


def test_bookmarks_carry_only_the_resource_version(
    api: Any, raw: Raw, ns: str, cluster: FakeCluster
) -> None:
    made = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    since = made["metadata"]["resourceVersion"]
    query = f"allowWatchBookmarks=true&resourceVersion={since}"
    events = _first(_watch(raw, ns, query), 0, until="BOOKMARK")
    assert [e["type"] for e in events] == ["BOOKMARK"]
    assert events[-1]["object"] == {
        "kind": "Widget",
        "apiVersion": f"{GROUP}/v1",
        "metadata": {"resourceVersion": str(cluster.resource_version)},
    }


def test_official_watch_helper(api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    stream = kubernetes.watch.Watch().stream(
        api.list_namespaced_custom_object, GROUP, "v1", ns, "widgets", timeout_seconds=1
    )
    seen = [(e["type"], e["object"]["metadata"]["name"]) for e in stream]
    assert seen == [("ADDED", "a")]


@pytest.fixture(scope="module")
def short_history() -> Iterator[FakeCluster]:
    with FakeCluster(crds=[widget_crd()], history=3) as fc:
        yield fc


def test_too_old_resource_version_is_an_error_event(short_history: FakeCluster) -> None:
    for i in range(6):
        short_history.create(widget(f"w{i}"))
    raw = Raw(short_history)
    response = raw("GET", f"/apis/{GROUP}/v1/namespaces/default/widgets?watch=1&resourceVersion=2")
    assert response.status == 200
    (event,) = _events(response)
    assert event["type"] == "ERROR"
    status = event["object"]
    assert (status["code"], status["reason"], status["kind"]) == (410, "Expired", "Status")
    assert (
        status["message"] == f"too old resource version: 2 ({short_history.resource_version - 3})"
    )


def test_drop_watches_closes_connections_abruptly(raw: Raw, ns: str, cluster: FakeCluster) -> None:
    response = raw(
        "GET", f"/apis/{GROUP}/v1/namespaces/{ns}/widgets?watch=1&timeoutSeconds=30", preload=False
    )
    for _ in range(200):  # the watch registers right after the headers are sent
        if cluster.open_watches:
            break
        time.sleep(0.01)
    assert cluster.drop_watches() >= 1
    with pytest.raises(urllib3.exceptions.ProtocolError):
        response.read()
