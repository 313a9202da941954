"""Merge patch, JSON patch, server-side apply (approximated), and unsupported patch types."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, call, status_of, widget

ApiException = kubernetes.client.ApiException
APPLY = "application/apply-patch+yaml"
JSON_PATCH = "application/json-patch+json"


def _path(ns: str, name: str = "a") -> str:
    return f"/apis/{GROUP}/v1/namespaces/{ns}/widgets/{name}"


def test_merge_patch(api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a", tags=["x"]))
    out = api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"spec": {"size": 4, "tags": None}}
    )
    assert out["spec"] == {"color": "red", "size": 4}
    assert out["metadata"]["generation"] == 2


def test_json_patch(api: Any, client: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    ops = [{"op": "replace", "path": "/spec/color", "value": "green"}]
    out = call(client, "PATCH", _path(ns), ops, JSON_PATCH)
    assert out["spec"]["color"] == "green"
    failing = [{"op": "test", "path": "/spec/color", "value": "red"}]
    with pytest.raises(ApiException) as err:
        call(client, "PATCH", _path(ns), failing, JSON_PATCH)
    assert err.value.status == 422
    assert status_of(err.value)["message"] == "testing value /spec/color failed: test failed"


def test_patch_with_stale_resource_version_conflicts(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    api.patch_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", {"spec": {"size": 2}})
    stale = {
        "metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
        "spec": {"size": 3},
    }
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", stale)
    assert status_of(err.value)["reason"] == "Conflict"


def test_patch_missing_object(api: Any, ns: str) -> None:
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_custom_object(GROUP, "v1", ns, "widgets", "ghost", {"spec": {}})
    assert err.value.status == 404


def test_strategic_merge_patch_is_unsupported(raw: Raw, api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    response = raw(
        "PATCH", _path(ns), {"spec": {"size": 2}}, "application/strategic-merge-patch+json"
    )
    assert response.status == 415
    body = response.json()
    assert body["reason"] == "UnsupportedMediaType"
    assert body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


def _apply(client: Any, ns: str, body: Any, manager: str, force: bool | None = None) -> Any:
    query: list[tuple[str, Any]] = [("fieldManager", manager)]
    if force is not None:
        query.append(("force", force))
    return call(client, "PATCH", _path(ns, body["metadata"]["name"]), body, APPLY, query)


def test_apply_creates_and_records_ownership(api: Any, client: Any, ns: str) -> None:
    out = _apply(client, ns, widget("a", size=2), "alice")
    managed = out["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"]) for m in managed] == [("alice", "Apply")]
    assert managed[0]["fieldsV1"] == {"f:spec": {"f:color": {}, "f:size": {}}}
    assert managed[0]["fieldsType"] == "FieldsV1"


def test_apply_conflict_and_force(api: Any, client: Any, ns: str) -> None:
    _apply(client, ns, widget("a", size=2), "alice")
    with pytest.raises(ApiException) as err:
        _apply(client, ns, widget("a", size=3), "bob")
    body = status_of(err.value)
    assert (err.value.status, body["reason"]) == (409, "Conflict")
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.size'
    assert body["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "alice"',
            "field": ".spec.size",
        }
    ]
    out = _apply(client, ns, widget("a", size=3), "bob", force=True)
    assert out["spec"]["size"] == 3
    owners = {m["manager"]: m["fieldsV1"] for m in out["metadata"]["managedFields"]}
    assert owners["bob"] == {"f:spec": {"f:color": {}, "f:size": {}}}
    assert owners["alice"] == {"f:spec": {"f:color": {}}}  # same value: shared, no conflict


def test_apply_removes_fields_it_no_longer_applies(api: Any, client: Any, ns: str) -> None:
    _apply(client, ns, widget("a", size=2, tags=["x"]), "alice")
    out = _apply(client, ns, widget("a", size=2), "alice")
    assert "tags" not in out["spec"]


def test_update_takes_ownership_from_apply(api: Any, client: Any, ns: str) -> None:
    _apply(client, ns, widget("a", size=2), "alice")
    api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"spec": {"size": 9}}, field_manager="editor"
    )
    with pytest.raises(ApiException) as err:
        _apply(client, ns, widget("a", size=2), "alice")
    assert 'conflict with "editor" using example.com/v1' in status_of(err.value)["message"]


def test_apply_requires_field_manager(raw: Raw, ns: str) -> None:
    response = raw("PATCH", _path(ns), widget("a"), APPLY)
    assert response.status == 422
    assert response.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for '
        "apply patch"
    )


def test_force_only_for_apply(raw: Raw, api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    response = raw("PATCH", _path(ns) + "?force=true", {"spec": {}}, "application/merge-patch+json")
    assert response.status == 422
    assert (
        "force: Forbidden: may not be specified for non-apply patch" in response.json()["message"]
    )


def test_apply_accepts_yaml(raw: Raw, ns: str) -> None:
    doc = f"apiVersion: {GROUP}/v1\nkind: Widget\nmetadata:\n  name: y\nspec:\n  color: blue\n"
    response = raw("PATCH", _path(ns, "y") + "?fieldManager=yaml", doc, APPLY)
    assert response.status == 201
    assert response.json()["spec"] == {"color": "blue", "size": 1}
