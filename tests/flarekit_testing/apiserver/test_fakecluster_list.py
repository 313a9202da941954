"""Label and field selectors, and paginated lists with continue tokens."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, status_of, widget

from flarekit_testing import FakeCluster

ApiException = kubernetes.client.ApiException


@pytest.fixture
def labelled(api: Any, ns: str) -> str:
    for name, labels in [
        ("a", {"app": "web", "tier": "front"}),
        ("b", {"app": "web", "tier": "back"}),
        ("c", {"app": "db"}),
        ("d", {}),
    ]:
        body = widget(name)
        body["metadata"]["labels"] = labels
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    return ns


def _names(api: Any, ns: str, **kwargs: Any) -> list[str]:
    listed = api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets", **kwargs)
    return [i["metadata"]["name"] for i in listed["items"]]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["a", "b"]),
        ("app==web,tier!=back", ["a"]),
        ("app in (web,db)", ["a", "b", "c"]),
        ("app notin (web)", ["c", "d"]),
        ("tier", ["a", "b"]),
        ("!tier", ["c", "d"]),
        ("", ["a", "b", "c", "d"]),
    ],
)
def test_label_selectors(api: Any, labelled: str, selector: str, expected: list[str]) -> None:
    assert _names(api, labelled, label_selector=selector) == expected


def test_bad_label_selector_is_bad_request(api: Any, labelled: str) -> None:
    with pytest.raises(ApiException) as err:
        _names(api, labelled, label_selector="app in (web")
    assert err.value.status == 400
    assert status_of(err.value)["reason"] == "BadRequest"


def test_field_selectors(api: Any, labelled: str) -> None:
    assert _names(api, labelled, field_selector="metadata.name=b") == ["b"]
    assert _names(api, labelled, field_selector="metadata.name!=b") == ["a", "c", "d"]
    everywhere = api.list_cluster_custom_object(
        GROUP, "v1", "widgets", field_selector=f"metadata.namespace={labelled}"
    )
    assert len(everywhere["items"]) == 4
    with pytest.raises(ApiException) as err:
        _names(api, labelled, field_selector="spec.color=red")
    assert err.value.status == 400
    assert "is not a known field selector" in status_of(err.value)["message"]


def test_pagination(api: Any, labelled: str) -> None:
    first = api.list_namespaced_custom_object(GROUP, "v1", labelled, "widgets", limit=3)
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b", "c"]
    assert first["metadata"]["remainingItemCount"] == 1
    token = first["metadata"]["continue"]
    api.create_namespaced_custom_object(GROUP, "v1", labelled, "widgets", widget("e"))
    api.delete_namespaced_custom_object(GROUP, "v1", labelled, "widgets", "d")
    second = api.list_namespaced_custom_object(
        GROUP, "v1", labelled, "widgets", limit=3, _continue=token
    )
    # A continued list is a consistent snapshot at the first page's resourceVersion.
    assert [i["metadata"]["name"] for i in second["items"]] == ["d"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in second["metadata"]


def test_pagination_with_selector(api: Any, labelled: str) -> None:
    page = api.list_namespaced_custom_object(
        GROUP, "v1", labelled, "widgets", limit=1, label_selector="app=web"
    )
    assert [i["metadata"]["name"] for i in page["items"]] == ["a"]
    rest = api.list_namespaced_custom_object(
        GROUP,
        "v1",
        labelled,
        "widgets",
        limit=1,
        label_selector="app=web",
        _continue=page["metadata"]["continue"],
    )
    assert [i["metadata"]["name"] for i in rest["items"]] == ["b"]


def test_expired_continue_token(api: Any, labelled: str, cluster: FakeCluster) -> None:
    first = api.list_namespaced_custom_object(GROUP, "v1", labelled, "widgets", limit=2)
    api.create_namespaced_custom_object(GROUP, "v1", labelled, "widgets", widget("z"))
    cluster.compact()
    with pytest.raises(ApiException) as err:
        api.list_namespaced_custom_object(
            GROUP, "v1", labelled, "widgets", limit=2, _continue=first["metadata"]["continue"]
        )
    body = status_of(err.value)
    assert (err.value.status, body["reason"]) == (410, "Expired")
    assert body["message"].startswith("The provided continue parameter is too old")
    inconsistent = body["metadata"]["continue"]
    rest = api.list_namespaced_custom_object(
        GROUP, "v1", labelled, "widgets", _continue=inconsistent
    )
    assert [i["metadata"]["name"] for i in rest["items"]] == ["c", "d", "z"]


def test_garbage_continue_token(api: Any, labelled: str) -> None:
    with pytest.raises(ApiException) as err:
        api.list_namespaced_custom_object(GROUP, "v1", labelled, "widgets", _continue="%%%")
    assert err.value.status == 400
