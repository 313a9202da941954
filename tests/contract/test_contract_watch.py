"""Contract: watch from a resourceVersion, and resume from the last event seen."""

from __future__ import annotations

from typing import Any

import kubernetes
from contract_backend import Cluster
from contract_support import GROUP, LQ, api, create_queue


def _events(cluster: Cluster, since: str, count: int) -> list[tuple[str, str, str]]:
    """The first `count` ADDED/DELETED events after `since`: (type, name, resourceVersion).
    MODIFIED events are skipped: an operator on a real cluster may write status meanwhile."""
    watch = kubernetes.watch.Watch()
    seen: list[tuple[str, str, str]] = []
    stream: Any = watch.stream(
        api(cluster).list_namespaced_custom_object,
        GROUP,
        cluster.version(GROUP),
        cluster.namespace,
        LQ,
        resource_version=since,
        timeout_seconds=10,
    )
    for event in stream:
        meta = event["object"]["metadata"]
        if event["type"] in ("ADDED", "DELETED"):
            seen.append((event["type"], meta["name"], meta["resourceVersion"]))
        if len(seen) == count:
            watch.stop()
    return seen


def test_watch_from_a_version_then_resume(cluster: Cluster) -> None:
    v, ns = cluster.version(GROUP), cluster.namespace
    start = api(cluster).list_namespaced_custom_object(GROUP, v, ns, LQ)["metadata"][
        "resourceVersion"
    ]
    for name in ("w1", "w2", "w3"):
        create_queue(cluster, name)
    first = _events(cluster, start, 2)
    assert [(t, n) for t, n, _ in first] == [("ADDED", "w1"), ("ADDED", "w2")]
    api(cluster).delete_namespaced_custom_object(GROUP, v, ns, LQ, "w1")
    resumed = _events(cluster, first[-1][2], 2)
    assert [(t, n) for t, n, _ in resumed] == [("ADDED", "w3"), ("DELETED", "w1")]
    assert int(resumed[0][2]) > int(first[-1][2])
