"""Deletion: finalizers, preconditions, propagation policy, and deletecollection."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, status_of, widget

from flarekit_testing import FakeCluster

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
    assert again["kind"] == "Widget"  # still held: kube-apiserver answers the object again
    assert again["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
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
    # as kube-apiserver answers: the object, held by the garbage collector's finalizer ...
    assert out["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert out["metadata"]["deletionTimestamp"]
    # ... which lets it go at once, since nothing depends on it
    with pytest.raises(ApiException) as gone:
        api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    assert gone.value.status == 404
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


def _owned(name: str, owner: dict[str, Any], **meta: Any) -> dict[str, Any]:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}
    body["metadata"]["ownerReferences"] = [ref]
    return body


@pytest.mark.parametrize("policy", [None, "Background", "Foreground"])
def test_garbage_collector_deletes_dependents(client: Any, ns: str, policy: str | None) -> None:
    core = kubernetes.client.CoreV1Api(client)
    owner = core.create_namespaced_config_map(ns, {"metadata": {"name": "owner"}}).to_dict()
    owner = {"metadata": {"name": "owner", "uid": owner["metadata"]["uid"]}}
    core.create_namespaced_config_map(ns, _owned("child", owner))
    core.create_namespaced_config_map(ns, {"metadata": {"name": "bystander"}})
    core.delete_namespaced_config_map("owner", ns, propagation_policy=policy)
    names = {c.metadata.name for c in core.list_namespaced_config_map(ns).items}
    assert "child" not in names and "owner" not in names
    assert "bystander" in names


def test_orphan_keeps_dependents_without_the_reference(client: Any, ns: str) -> None:
    core = kubernetes.client.CoreV1Api(client)
    made = core.create_namespaced_config_map(ns, {"metadata": {"name": "owner"}})
    owner = {"metadata": {"name": "owner", "uid": made.metadata.uid}}
    core.create_namespaced_config_map(ns, _owned("child", owner))
    core.delete_namespaced_config_map("owner", ns, propagation_policy="Orphan")
    child = core.read_namespaced_config_map("child", ns)
    assert child.metadata.owner_references is None
    with pytest.raises(ApiException):
        core.read_namespaced_config_map("owner", ns)


def test_foreground_waits_for_a_dependent_with_finalizers(
    client: Any, ns: str, cluster: FakeCluster
) -> None:
    core = kubernetes.client.CoreV1Api(client)
    made = core.create_namespaced_config_map(ns, {"metadata": {"name": "owner"}})
    owner = {"metadata": {"name": "owner", "uid": made.metadata.uid}}
    core.create_namespaced_config_map(ns, _owned("child", owner, finalizers=["test/keep"]))
    core.delete_namespaced_config_map("owner", ns, propagation_policy="Foreground")
    held = core.read_namespaced_config_map("owner", ns)
    assert held.metadata.deletion_timestamp and held.metadata.finalizers == ["foregroundDeletion"]
    cluster.patch("configmaps", "child", {"metadata": {"finalizers": None}}, ns)
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_config_map("owner", ns)
    assert gone.value.status == 404
