"""Watches: typed events, resuming after dropped connections without losing or repeating an
event, relisting after 410 Gone, bookmarks, and stopping.

The watch generator runs only while the test asks for the next event, so "drop the connection,
change things, then read on" is deterministic: the changes happen while the client is away.
"""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import threading

import pytest
from client_support import cluster, fc, raycluster  # noqa: F401

from flarekit import ApiUnavailable, Client, Forbidden, Watch, WatchEvent
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster
from kube_support import FAST_RETRY


def _summary(event: WatchEvent[RayCluster]) -> tuple[str, str, str]:
    meta = event.object.metadata
    assert meta is not None
    return (event.type, meta.name or "", (meta.labels or {}).get("step", ""))


def _label(client: Client, name: str, ns: str, step: int) -> None:
    client.patch(RayCluster, name, {"metadata": {"labels": {"step": str(step)}}}, namespace=ns)


def test_starts_with_current_objects_then_follows_changes(client: Client, ns: str) -> None:
    client.create(raycluster("old"), namespace=ns)
    with client.watch(RayCluster, namespace=ns, timeout=30) as watch:
        first = next(watch)
        assert isinstance(first.object, RayCluster)
        assert _summary(first) == ("ADDED", "old", "")
        client.create(raycluster("new"), namespace=ns)
        _label(client, "new", ns, 1)
        client.delete(RayCluster, "old", namespace=ns)
        events = [_summary(next(watch)) for _ in range(3)]
    assert events == [("ADDED", "new", ""), ("MODIFIED", "new", "1"), ("DELETED", "old", "")]


def test_survives_disconnects_without_losing_or_repeating_events(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    client.create(raycluster("a"), namespace=ns)
    watch = client.watch(RayCluster, namespace=ns, timeout=30)
    seen = [_summary(next(watch))]  # from the initial list
    _label(client, "a", ns, 0)
    seen.append(_summary(next(watch)))  # from the watch connection, which is now open
    expected = [("ADDED", "a", ""), ("MODIFIED", "a", "0")]
    for step in range(1, 7):
        # The watch is open (it delivered the last event); kill it, then change things
        # while nobody listens. Resuming from the last resourceVersion must replay them.
        assert cluster.drop_watches() >= 1
        _label(client, "a", ns, step)
        client.create(raycluster(f"b{step}"), namespace=ns)
        expected += [("MODIFIED", "a", str(step)), ("ADDED", f"b{step}", "")]
        seen += [_summary(next(watch)), _summary(next(watch))]
    watch.close()
    assert seen == expected
    assert watch.reconnects >= 6 and watch.relists == 0
    resumed = [
        r.param("resourceVersion")
        for r in cluster.requests
        if r.param("watch") == "true" and r.path.endswith(f"/namespaces/{ns}/rayclusters")
    ]
    assert len(resumed) >= 7 and all(resumed)
    assert len(set(resumed)) == len(resumed)  # every reconnect resumed from a newer version


def test_relists_after_410_and_reports_the_difference(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    for name in ("keep", "change", "remove"):
        client.create(raycluster(name), namespace=ns)
    watch = client.watch(RayCluster, namespace=ns, timeout=30)
    assert sorted(_summary(next(watch))[1] for _ in range(3)) == ["change", "keep", "remove"]
    cluster.drop_watches()
    _label(client, "change", ns, 1)
    client.delete(RayCluster, "remove", namespace=ns)
    client.create(raycluster("added"), namespace=ns)
    cluster.compact()  # the version the watch would resume from is now too old: 410
    events = sorted(_summary(next(watch)) for _ in range(3))
    assert events == [
        ("ADDED", "added", ""),
        ("DELETED", "remove", ""),
        ("MODIFIED", "change", "1"),
    ]
    assert watch.relists == 1
    _label(client, "keep", ns, 2)
    assert _summary(next(watch)) == ("MODIFIED", "keep", "2")  # and it watches on afterwards
    watch.close()


def test_bookmarks_advance_the_resume_point(cluster: FakeCluster, client: Client, ns: str) -> None:
    elsewhere = f"{ns}-other"
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": elsewhere}})
    watch = client.watch(RayCluster, namespace=ns, timeout=1)
    assert list(watch) == []  # nothing in this namespace; the stream ends at the timeout
    start = int(watch.resource_version or 0)
    client.create(raycluster("noise"), namespace=elsewhere)  # moves the cluster's version only
    later = client.watch(RayCluster, namespace=ns, resource_version=str(start), timeout=1)
    assert list(later) == []
    assert int(later.resource_version or 0) > start  # learnt from a bookmark, not from events
    watches = [r for r in cluster.requests if r.param("watch") == "true"]
    assert all(r.param("allowWatchBookmarks") == "true" for r in watches)


def test_selectors_apply_to_the_watch(client: Client, ns: str) -> None:
    client.create(raycluster("x", {"team": "x"}), namespace=ns)
    client.create(raycluster("y", {"team": "y"}), namespace=ns)
    with client.watch(RayCluster, namespace=ns, label_selector={"team": "y"}, timeout=30) as w:
        assert _summary(next(w))[:2] == ("ADDED", "y")
        _label(client, "x", ns, 1)
        _label(client, "y", ns, 1)
        assert _summary(next(w)) == ("MODIFIED", "y", "1")


def test_close_from_another_thread_ends_the_iteration(client: Client, ns: str) -> None:
    watch: Watch[RayCluster] = client.watch(RayCluster, namespace=ns)
    timer = threading.Timer(0.3, watch.close)
    timer.start()
    try:
        assert list(watch) == []
    finally:
        timer.cancel()


def test_a_forbidden_watch_raises(cluster: FakeCluster, client: Client, ns: str) -> None:
    cluster.deny("watch", "rayclusters", ns)
    try:
        with pytest.raises(Forbidden) as info:
            next(client.watch(RayCluster, namespace=ns, resource_version="1", timeout=5))
        assert info.value.verb == "watch"
    finally:
        cluster.clear_denies()


def test_a_watch_that_cannot_reconnect_gives_up(
    cluster: FakeCluster, client: Client, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flarekit.client import _retry

    monkeypatch.setattr(_retry, "_sleep", lambda seconds: None)
    watch = client.watch(RayCluster, namespace=ns, timeout=30)
    path = f"/apis/ray.io/v1/namespaces/{ns}/rayclusters"
    cluster.inject(lambda r: r.path == path and r.param("watch") == "true", status=503, times=None)
    try:
        with pytest.raises(ApiUnavailable):
            next(watch)
    finally:
        cluster.clear_faults()
    assert cluster.request_count(path=path, status=503) == FAST_RETRY.attempts
