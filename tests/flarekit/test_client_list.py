"""Lists: typed items, selectors, and paging with limit/continue behind the iterator."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import pytest
from client_support import cluster, fc, raycluster_body  # noqa: F401

from flarekit import ALL_NAMESPACES, Client, Gone
from flarekit.testing import FakeCluster
from flarekit_models.ray.v1 import RayCluster
from kube_support import new_namespace


def _seed(cluster: FakeCluster, ns: str, count: int, labels: dict[str, str] | None = None) -> None:
    for i in range(count):
        body = raycluster_body(f"rc-{i:03d}", labels)
        body["metadata"]["namespace"] = ns
        cluster.create(body)


def _names(items: object) -> list[str]:
    return [o.metadata.name for o in items if o.metadata and o.metadata.name]  # type: ignore[attr-defined]


def test_pagination_over_more_objects_than_a_page(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    _seed(cluster, ns, 25)
    cluster.clear_requests()
    pages = client.list(RayCluster, namespace=ns, page_size=10)
    items = list(pages)
    assert all(isinstance(i, RayCluster) for i in items)
    assert _names(items) == [f"rc-{i:03d}" for i in range(25)]
    assert pages.pages == 3
    sent = [r for r in cluster.requests if r.method == "GET"]
    assert [r.param("limit") for r in sent] == ["10", "10", "10"]
    assert sent[0].param("continue") is None
    assert sent[1].param("continue") and sent[2].param("continue")
    assert sent[1].param("continue") != sent[2].param("continue")


def test_pages_come_from_one_snapshot(cluster: FakeCluster, client: Client, ns: str) -> None:
    _seed(cluster, ns, 4)
    iterator = iter(client.list(RayCluster, namespace=ns, page_size=2))
    first = [next(iterator), next(iterator)]
    late = raycluster_body("rc-zzz")  # sorts last: a live list would include it
    late["metadata"]["namespace"] = ns
    cluster.create(late)
    rest = list(iterator)
    assert _names(first + rest) == ["rc-000", "rc-001", "rc-002", "rc-003"]


def test_resource_version_is_the_snapshot_and_iteration_reuses_its_page(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    _seed(cluster, ns, 3)
    pages = client.list(RayCluster, namespace=ns)
    version = pages.resource_version
    assert int(version) == cluster.resource_version
    assert len(list(pages)) == 3 and pages.pages == 1
    assert pages.resource_version == version


def test_label_and_field_selectors(cluster: FakeCluster, client: Client, ns: str) -> None:
    _seed(cluster, ns, 2, {"team": "a"})
    other = raycluster_body("other", {"team": "b"})
    other["metadata"]["namespace"] = ns
    cluster.create(other)
    assert _names(client.list(RayCluster, namespace=ns, label_selector={"team": "b"})) == ["other"]
    assert len(list(client.list(RayCluster, namespace=ns, label_selector="team!=b"))) == 2
    by_name = client.list(RayCluster, namespace=ns, field_selector={"metadata.name": "rc-001"})
    assert _names(by_name) == ["rc-001"]
    assert cluster.requests[-1].param("fieldSelector") == "metadata.name=rc-001"


def test_all_namespaces(cluster: FakeCluster, client: Client) -> None:
    first, second = new_namespace(cluster), new_namespace(cluster)
    _seed(cluster, first, 1, {"probe": first})
    _seed(cluster, second, 1, {"probe": first})
    found = client.list(RayCluster, namespace=ALL_NAMESPACES, label_selector={"probe": first})
    assert sorted(str(o.metadata.namespace) for o in found if o.metadata) == sorted([first, second])
    assert cluster.requests[-1].path == "/apis/ray.io/v1/rayclusters"


def test_an_expired_continue_token_is_gone(cluster: FakeCluster, client: Client, ns: str) -> None:
    _seed(cluster, ns, 4)
    iterator = iter(client.list(RayCluster, namespace=ns, page_size=2))
    next(iterator), next(iterator)
    cluster.patch("rayclusters", "rc-000", {"metadata": {"labels": {"x": "y"}}}, ns)
    cluster.compact()
    with pytest.raises(Gone) as info:
        next(iterator)
    assert info.value.verb == "list" and info.value.reason == "Expired"


def test_page_size_must_be_positive(client: Client) -> None:
    with pytest.raises(ValueError, match="page_size"):
        client.list(RayCluster, page_size=0)
