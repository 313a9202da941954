"""Lists: typed items, selectors, and paging with limit/continue behind the iterator."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import pytest
from client_support import cluster, fc, raycluster_body  # noqa: F401
from pydantic import AfterValidator, Field, ValidationError

from flarekit import ALL_NAMESPACES, Client, Gone
from flarekit.client._codec import ResourceList, decode_page
from flarekit_models._base import KubeResource
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster
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


# --------------------------------------------------------------------------- decoding a page
def _page(*items: dict[str, Any]) -> bytes:
    return json.dumps({"metadata": {"resourceVersion": "7"}, "items": list(items)}).encode()


def test_a_listed_object_is_read_as_one_object_alone_is() -> None:
    # An unknown key spelt like an attribute stays an unknown key (a newer server's field is
    # not mistaken for a known one), as `Client.get` reads it.
    body = raycluster_body("rc")
    body["spec"]["headGroupSpec"]["enable_ingress"] = True
    page = decode_page(ResourceList[RayCluster], _page(raycluster_body("first"), body))
    assert page.items is not None and page.metadata.resource_version == "7"
    listed = page.items[1]
    assert listed.spec is not None and listed.spec.head_group_spec.enable_ingress is None
    assert listed.to_dict() == RayCluster.model_validate_json(json.dumps(body)).to_dict() == body


@pytest.mark.parametrize("number", ["NaN", "1e400", "-Infinity"])
def test_a_bad_object_in_a_page_is_an_error_at_its_path(number: str) -> None:
    body = raycluster_body("rc")
    body["metadata"]["managedFields"] = [{"manager": "m", "fieldsV1": {"f:spec": "NUMBER"}}]
    text = _page(raycluster_body("first"), body).replace(b'"NUMBER"', number.encode())
    with pytest.raises(ValidationError) as error:
        decode_page(ResourceList[RayCluster], text)
    (only,) = error.value.errors()
    assert only["loc"] == ("items", 1, "metadata", "managedFields", 0, "fieldsV1", "f:spec")


_collector_seen: list[bool] = []
#: Values whose validation waits: value -> (set once inside, set to go on).
_holds: dict[int, tuple[threading.Event, threading.Event]] = {}


def _note_collector(value: int) -> int:
    _collector_seen.append(gc.isenabled())
    if value in _holds:
        inside, release = _holds[value]
        inside.set()
        release.wait(10)
    return value


class _Probe(KubeResource):
    """A kind whose validation notes whether the cyclic collector was running."""

    api_version: Literal["probe.test/v1"] = Field("probe.test/v1", alias="apiVersion")
    kind: Literal["Probe"] = "Probe"
    seen: Annotated[int, AfterValidator(_note_collector)] = 0


@pytest.fixture()
def collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    _collector_seen.clear()
    _holds.clear()
    (gc.enable if enabled else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_while_a_page_is_decoded_and_left_as_found(
    collector_restored: None, enabled: bool
) -> None:
    (gc.enable if enabled else gc.disable)()
    page = decode_page(ResourceList[_Probe], _page({"seen": 1}, {"seen": 2}))
    assert page.items is not None and [p.seen for p in page.items] == [1, 2]
    assert _collector_seen == [False, False]
    assert gc.isenabled() is enabled
    with pytest.raises(ValidationError):
        decode_page(ResourceList[_Probe], _page({"seen": 1}, {"seen": "two"}))
    assert gc.isenabled() is enabled


def test_the_collector_stays_paused_until_the_last_concurrent_decode_ends(
    collector_restored: None,
) -> None:
    gc.enable()
    inside, release = _holds[99] = (threading.Event(), threading.Event())
    other = threading.Thread(target=decode_page, args=(ResourceList[_Probe], _page({"seen": 99})))
    other.start()
    try:
        assert inside.wait(10)
        decode_page(ResourceList[_Probe], _page({"seen": 1}))
        assert not gc.isenabled()  # the other thread's decode is still under way
    finally:
        release.set()
        other.join(10)
    assert gc.isenabled()
