"""Schema validation (422), defaulting and pruning, field validation modes, and dryRun."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, status_of, widget

from flarekit_testing import FakeCluster

ApiException = kubernetes.client.ApiException


def test_invalid_object_lists_causes(api: Any, ns: str) -> None:
    body = widget("a", color="purple", size=-1)
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    status = status_of(err.value)
    assert (err.value.status, status["reason"]) == (422, "Invalid")
    assert status["details"]["kind"] == "Widget"
    assert status["details"]["group"] == GROUP
    assert status["details"]["name"] == "a"
    fields = sorted(c["field"] for c in status["details"]["causes"])
    assert fields == ["spec.color", "spec.size"]
    assert status["message"].startswith('Widget.example.com "a" is invalid: [')


def test_required_field_and_bad_name(api: Any, ns: str) -> None:
    body = widget("Not_A_Name")
    del body["spec"]["color"]
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    causes = {c["field"]: c["reason"] for c in status_of(err.value)["details"]["causes"]}
    assert causes == {"metadata.name": "FieldValueInvalid", "spec.color": "FieldValueRequired"}


def test_each_version_validates_with_its_own_schema(api: Any, ns: str) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "Widget",
        "metadata": {"name": "b"},
        "spec": {},
    }
    out = api.create_namespaced_custom_object(GROUP, "v1beta1", ns, "widgets", body)
    assert out["apiVersion"] == f"{GROUP}/v1beta1"
    stored = api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "b")
    assert stored["apiVersion"] == f"{GROUP}/v1"


def _create(client: Any, ns: str, body: Any, validation: str | None) -> tuple[Any, Any]:
    query = [("fieldValidation", validation)] if validation else []
    data, _, headers = client.call_api(
        f"/apis/{GROUP}/v1/namespaces/{ns}/widgets",
        "POST",
        query_params=query,
        header_params={"Content-Type": "application/json", "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
        response_type="object",
        _return_http_data_only=False,
    )
    return data, headers


def test_unknown_fields_warn_by_default_and_are_pruned(client: Any, ns: str) -> None:
    out, headers = _create(client, ns, widget("a", foo=1), None)
    assert "foo" not in out["spec"]
    assert headers["Warning"] == '299 - "unknown field \\"spec.foo\\""'


def test_strict_field_validation_rejects(client: Any, ns: str) -> None:
    with pytest.raises(ApiException) as err:
        _create(client, ns, widget("a", foo=1, bar=2), "Strict")
    status = status_of(err.value)
    assert (err.value.status, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'unknown field "spec.bar", unknown field "spec.foo"'
    )


def test_ignore_field_validation_is_silent(client: Any, ns: str) -> None:
    out, headers = _create(client, ns, widget("a", foo=1), "Ignore")
    assert "foo" not in out["spec"]
    assert "Warning" not in headers


def test_bad_field_validation_value(client: Any, ns: str) -> None:
    with pytest.raises(ApiException) as err:
        _create(client, ns, widget("a"), "Loud")
    assert err.value.status == 422
    assert status_of(err.value)["details"]["kind"] == "CreateOptions"


def test_dry_run_create_stores_nothing(api: Any, ns: str, cluster: FakeCluster) -> None:
    before = cluster.resource_version
    out = api.create_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", widget("a"), dry_run="All"
    )
    assert out["metadata"]["uid"]
    assert "resourceVersion" not in out["metadata"]
    assert cluster.resource_version == before
    assert cluster.objects("widgets", ns) == []


def test_dry_run_update_and_delete_change_nothing(api: Any, ns: str, cluster: FakeCluster) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    before = cluster.resource_version
    patched = api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"spec": {"size": 5}}, dry_run="All"
    )
    assert patched["spec"]["size"] == 5
    api.delete_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", dry_run="All")
    assert cluster.resource_version == before
    assert api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")["spec"]["size"] == 1


def test_dry_run_still_validates(api: Any, ns: str) -> None:
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(
            GROUP, "v1", ns, "widgets", widget("a", color="purple"), dry_run="All"
        )
    assert err.value.status == 422


def test_unsupported_dry_run_value(raw: Raw, ns: str) -> None:
    response = raw("POST", f"/apis/{GROUP}/v1/namespaces/{ns}/widgets?dryRun=Some", widget("a"))
    assert response.status == 422
    assert (
        'dryRun: Unsupported value: "Some": supported values: "All"' in response.json()["message"]
    )


def test_malformed_json_is_bad_request(raw: Raw, ns: str) -> None:
    response = raw("POST", f"/apis/{GROUP}/v1/namespaces/{ns}/widgets", b"{not json")
    assert response.status == 400
    assert response.json()["reason"] == "BadRequest"
    assert json.loads(response.data)["kind"] == "Status"
