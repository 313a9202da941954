"""Create, read, replace and delete through CustomObjectsApi, and the Status bodies of failures."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, status_of, widget

from flarekit_testing import FakeCluster

ApiException = kubernetes.client.ApiException


def test_create_sets_server_fields(api: Any, ns: str) -> None:
    out = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    meta = out["metadata"]
    assert meta["namespace"] == ns
    assert len(meta["uid"]) == 36
    assert meta["creationTimestamp"].endswith("Z")
    assert meta["generation"] == 1
    assert int(meta["resourceVersion"]) > 0
    assert out["spec"] == {"color": "red", "size": 1}  # defaulted


def test_resource_version_is_one_global_counter(api: Any, ns: str, cluster: FakeCluster) -> None:
    first = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    second = api.create_cluster_custom_object(
        GROUP,
        "v1",
        "gadgets",
        {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": f"g-{ns}"}},
    )
    assert (
        int(second["metadata"]["resourceVersion"]) == int(first["metadata"]["resourceVersion"]) + 1
    )
    assert cluster.resource_version == int(second["metadata"]["resourceVersion"])


def test_generate_name(api: Any, ns: str) -> None:
    body = widget("")
    body["metadata"] = {"generateName": "job-"}
    out = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    name = out["metadata"]["name"]
    assert name.startswith("job-") and len(name) == len("job-") + 5


def test_get_and_list(api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("b"))
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    got = api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    assert got["metadata"]["name"] == "a"
    listed = api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")
    assert listed["kind"] == "WidgetList"
    assert listed["apiVersion"] == f"{GROUP}/v1"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a", "b"]
    assert int(listed["metadata"]["resourceVersion"]) >= int(got["metadata"]["resourceVersion"])


def test_not_found_status(api: Any, ns: str) -> None:
    with pytest.raises(ApiException) as err:
        api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "nope")
    assert err.value.status == 404
    assert status_of(err.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'widgets.example.com "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "group": GROUP, "kind": "widgets"},
        "code": 404,
    }


def test_already_exists(api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    body = status_of(err.value)
    assert (err.value.status, body["reason"]) == (409, "AlreadyExists")
    assert body["message"] == 'widgets.example.com "a" already exists'


def test_replace_bumps_generation_only_for_spec(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    obj["metadata"]["labels"] = {"team": "x"}
    relabelled = api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", obj)
    assert relabelled["metadata"]["generation"] == 1
    assert relabelled["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]
    relabelled["spec"]["color"] = "blue"
    recoloured = api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", relabelled)
    assert recoloured["metadata"]["generation"] == 2
    assert recoloured["metadata"]["uid"] == obj["metadata"]["uid"]


def test_noop_replace_keeps_resource_version(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    again = api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", obj)
    assert again["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


def test_stale_resource_version_conflicts(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    stale = dict(obj, spec={"color": "green"})
    obj["spec"]["color"] = "blue"
    api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", obj)
    with pytest.raises(ApiException) as err:
        api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", stale)
    body = status_of(err.value)
    assert (err.value.status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on widgets.example.com "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_replace_requires_resource_version(api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    with pytest.raises(ApiException) as err:
        api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", widget("a"))
    body = status_of(err.value)
    assert (err.value.status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0x0: must be specified for an update",
            "field": "metadata.resourceVersion",
        }
    ]


def test_replace_missing_object_is_not_found(api: Any, ns: str) -> None:
    body = widget("ghost")
    body["metadata"]["resourceVersion"] = "1"
    with pytest.raises(ApiException) as err:
        api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "ghost", body)
    assert err.value.status == 404


def test_name_and_namespace_mismatch_are_bad_requests(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    obj["metadata"]["name"] = "b"
    with pytest.raises(ApiException) as err:
        api.replace_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", obj)
    assert status_of(err.value)["message"] == (
        "the name of the object (b) does not match the name on the URL (a)"
    )
    body = widget("c")
    body["metadata"]["namespace"] = "default"
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    assert status_of(err.value)["reason"] == "BadRequest"
    assert "does not match the namespace" in status_of(err.value)["message"]


def test_wrong_api_version_in_body(api: Any, ns: str) -> None:
    body = widget("a")
    body["apiVersion"] = f"{GROUP}/v9"
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    assert err.value.status == 400
    assert "does not match the expected API version" in status_of(err.value)["message"]


def test_delete_answers_status_success(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    out = api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    assert out == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "a", "group": GROUP, "kind": "widgets", "uid": obj["metadata"]["uid"]},
    }
    with pytest.raises(ApiException) as err:
        api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    assert err.value.status == 404


def test_cluster_scoped_crud(api: Any, ns: str) -> None:
    name = f"gadget-{ns}"
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gadget",
        "metadata": {"name": name, "namespace": "x"},
    }
    out = api.create_cluster_custom_object(GROUP, "v1", "gadgets", body)
    assert "namespace" not in out["metadata"]
    assert api.get_cluster_custom_object(GROUP, "v1", "gadgets", name)["metadata"]["name"] == name
    names = [
        g["metadata"]["name"]
        for g in api.list_cluster_custom_object(GROUP, "v1", "gadgets")["items"]
    ]
    assert name in names
    api.delete_cluster_custom_object(GROUP, "v1", "gadgets", name)
    with pytest.raises(ApiException) as err:
        api.get_cluster_custom_object(GROUP, "v1", "gadgets", name)
    assert status_of(err.value)["message"] == f'gadgets.example.com "{name}" not found'


def test_list_across_namespaces(api: Any, ns: str, cluster: FakeCluster) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("everywhere"))
    listed = api.list_cluster_custom_object(GROUP, "v1", "widgets")
    found = {(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]}
    assert (ns, "everywhere") in found


def test_other_served_version_is_an_api_version_rewrite(api: Any, ns: str, client: Any) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    beta = api.get_namespaced_custom_object(GROUP, "v1beta1", ns, "widgets", "a")
    assert beta["apiVersion"] == f"{GROUP}/v1beta1"
    assert beta["spec"] == {"color": "red", "size": 1}
    _, _, headers = client.call_api(
        f"/apis/{GROUP}/v1beta1/namespaces/{ns}/widgets/a",
        "GET",
        auth_settings=["BearerToken"],
        response_type="object",
        _return_http_data_only=False,
    )
    assert (
        headers["Warning"]
        == '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"'
    )


def test_unserved_version_is_not_found(raw: Raw, ns: str) -> None:
    response = raw("GET", f"/apis/{GROUP}/v1alpha1/namespaces/{ns}/widgets")
    assert response.status == 404
    assert response.json()["message"] == "the server could not find the requested resource"


def test_post_to_an_object_path_is_method_not_allowed(raw: Raw, ns: str) -> None:
    response = raw("POST", f"/apis/{GROUP}/v1/namespaces/{ns}/widgets/a", widget("a"))
    assert response.status == 405
    assert response.json()["reason"] == "MethodNotAllowed"


def test_missing_namespace(api: Any) -> None:
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", "nowhere", "widgets", widget("a"))
    body = status_of(err.value)
    assert err.value.status == 404
    assert body["message"] == 'namespaces "nowhere" not found'
    assert body["details"] == {"name": "nowhere", "kind": "namespaces"}
