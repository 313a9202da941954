"""Contract: label and field selectors, pagination with limit/continue."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from contract_backend import Cluster
from contract_support import GROUP, LQ, api, create_queue

TEAMS = {"a": "red", "b": "red", "c": "blue", "d": "green"}


@pytest.fixture
def queues(cluster: Cluster) -> Cluster:
    for name, team in TEAMS.items():
        labels = {"team": team}
        if name in ("a", "c"):
            labels["gpu"] = "yes"
        create_queue(cluster, name, labels=labels)
    create_queue(cluster, "e")  # no labels at all
    return cluster


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("team=red", ["a", "b"]),
        ("team==red", ["a", "b"]),
        ("team!=red", ["c", "d", "e"]),
        ("team in (blue,green)", ["c", "d"]),
        ("team notin (red)", ["c", "d", "e"]),
        ("gpu", ["a", "c"]),
        ("!gpu", ["b", "d", "e"]),
        ("team=red,gpu", ["a"]),
    ],
)
def test_label_selectors(queues: Cluster, selector: str, expected: list[str]) -> None:
    listed = api(queues).list_namespaced_custom_object(
        GROUP, queues.version(GROUP), queues.namespace, LQ, label_selector=selector
    )
    assert sorted(o["metadata"]["name"] for o in listed["items"]) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [("metadata.name=c", ["c"]), ("metadata.name!=c", ["a", "b", "d", "e"])],
)
def test_field_selectors(queues: Cluster, selector: str, expected: list[str]) -> None:
    listed = api(queues).list_namespaced_custom_object(
        GROUP, queues.version(GROUP), queues.namespace, LQ, field_selector=selector
    )
    assert sorted(o["metadata"]["name"] for o in listed["items"]) == expected


def test_pagination_walks_every_object_once(queues: Cluster) -> None:
    v, ns = queues.version(GROUP), queues.namespace
    names: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        kwargs: dict[str, Any] = {"limit": 2}
        if token:
            kwargs["_continue"] = token
        page = api(queues).list_namespaced_custom_object(GROUP, v, ns, LQ, **kwargs)
        pages += 1
        assert len(page["items"]) <= 2
        names.extend(o["metadata"]["name"] for o in page["items"])
        token = page["metadata"].get("continue")
        if not token:
            break
        assert page["metadata"]["remainingItemCount"] == 5 - len(names)
    assert pages == 3
    assert sorted(names) == ["a", "b", "c", "d", "e"]


def test_a_namespace_that_does_not_exist_lists_empty(cluster: Cluster) -> None:
    # A real API server answers a list (and a watch) in a missing namespace with nothing, not
    # 404; only reading, writing or deleting an object there is NotFound.
    missing = cluster.unique("no-such-namespace")
    version = cluster.version(GROUP)
    listed = api(cluster).list_namespaced_custom_object(GROUP, version, missing, LQ)
    assert listed["items"] == []
    pods = kubernetes.client.CoreV1Api(cluster.api_client()).list_namespaced_pod(missing)
    assert pods.items == []
    watched = api(cluster).list_namespaced_custom_object(
        GROUP, version, missing, LQ, watch=True, timeout_seconds=1, _preload_content=False
    )
    assert watched.status == 200
    watched.release_conn()
    with pytest.raises(kubernetes.client.ApiException) as read:
        api(cluster).get_namespaced_custom_object(GROUP, version, missing, LQ, "q")
    assert read.value.status == 404
