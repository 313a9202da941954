"""Deletion: finalizers, preconditions, propagation policy, and deletecollection."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, status_of, widget

from flarekit.testing import FakeCluster

ApiException = kubernetes.client.ApiException


def _held(api: Any, ns: str, name: str = "a") -> Any:
    body = widget(name)
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    return api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)


def test_finalizers_hold_the_object_until_removed(api: Any, ns: str, cluster: FakeCluster) -> None:
    created = _held(api, ns)
    answer = api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    assert answer["kind"] == "Widget"  # not deleted yet: the object comes back
    meta = answer["metadata"]
    assert meta["deletionTimestamp"]
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == 2
    assert int(meta["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    again = api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    assert again["status"] == "Success"
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_custom_object(
            GROUP,
            "v1",
            ns,
            "widgets",
            "a",
            {"metadata": {"finalizers": ["x", "example.com/cleanup"]}},
        )
    assert (
        "no new finalizers can be added if the object is being deleted"
        in status_of(err.value)["message"]
    )
    api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"metadata": {"finalizers": []}}
    )
    assert cluster.get("widgets", "a", ns) is None


def test_finalizer_removal_emits_modified_then_deleted(api: Any, raw: Raw, ns: str) -> None:
    created = _held(api, ns)
    api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"metadata": {"finalizers": None}}
    )
    path = (
        f"/apis/{GROUP}/v1/namespaces/{ns}/widgets?watch=1&timeoutSeconds=1"
        f"&resourceVersion={created['metadata']['resourceVersion']}"
    )
    lines = raw("GET", path).data.decode().splitlines()
    import json

    events = [json.loads(line) for line in lines]
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert "finalizers" not in events[1]["object"]["metadata"]


def test_preconditions(api: Any, ns: str) -> None:
    created = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    wrong_uid = kubernetes.client.V1DeleteOptions(
        preconditions=kubernetes.client.V1Preconditions(uid="nope")
    )
    with pytest.raises(ApiException) as err:
        api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", body=wrong_uid)
    status = status_of(err.value)
    assert (err.value.status, status["reason"]) == (409, "Conflict")
    assert status["message"] == (
        'Operation cannot be fulfilled on widgets.example.com "a": Precondition failed: UID in '
        f"precondition: nope, UID in object meta: {created['metadata']['uid']}"
    )
    stale = kubernetes.client.V1DeleteOptions(
        preconditions=kubernetes.client.V1Preconditions(resource_version="1")
    )
    with pytest.raises(ApiException) as err:
        api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", body=stale)
    assert err.value.status == 409
    right = kubernetes.client.V1DeleteOptions(
        preconditions=kubernetes.client.V1Preconditions(uid=created["metadata"]["uid"])
    )
    assert (
        api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", body=right)["status"]
        == "Success"
    )


def test_propagation_policy(api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    out = api.delete_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", propagation_policy="Foreground"
    )
    assert out["status"] == "Success"
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("b"))
    with pytest.raises(ApiException) as err:
        api.delete_namespaced_custom_object(
            GROUP, "v1", ns, "widgets", "b", propagation_policy="Later"
        )
    assert err.value.status == 422
    assert status_of(err.value)["details"]["kind"] == "DeleteOptions"


def test_delete_collection_with_selector(api: Any, ns: str, cluster: FakeCluster) -> None:
    for name, app in [("a", "web"), ("b", "web"), ("c", "db")]:
        body = widget(name)
        body["metadata"]["labels"] = {"app": app}
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    out = api.delete_collection_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", label_selector="app=web"
    )
    assert out["kind"] == "WidgetList"
    assert sorted(i["metadata"]["name"] for i in out["items"]) == ["a", "b"]
    assert [o["metadata"]["name"] for o in cluster.objects("widgets", ns)] == ["c"]


def test_delete_missing(api: Any, ns: str) -> None:
    with pytest.raises(ApiException) as err:
        api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "ghost")
    assert status_of(err.value)["message"] == 'widgets.example.com "ghost" not found'
