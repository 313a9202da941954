"""Contract: create/get/list/replace/delete, Status errors, dryRun, field validation."""

from __future__ import annotations

import kubernetes
import pytest
from contract_backend import Cluster
from contract_support import (
    GROUP,
    LQ,
    RF,
    api,
    create_queue,
    local_queue,
    resource_flavor,
    status_of,
)


def test_create_answers_201_with_server_set_fields(cluster: Cluster) -> None:
    body = local_queue(cluster, "")
    body["metadata"] = {"generateName": "lq-"}
    obj, code, _ = api(cluster).create_namespaced_custom_object_with_http_info(
        GROUP, cluster.version(GROUP), cluster.namespace, LQ, body
    )
    meta = obj["metadata"]
    assert code == 201
    assert meta["name"].startswith("lq-") and len(meta["name"]) > len("lq-")
    assert meta["namespace"] == cluster.namespace
    assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"]
    assert meta["generation"] == 1


def test_get_list_replace_delete_namespaced(cluster: Cluster) -> None:
    v, ns = cluster.version(GROUP), cluster.namespace
    created = create_queue(cluster, "lq")
    got = api(cluster).get_namespaced_custom_object(GROUP, v, ns, LQ, "lq")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    listed = api(cluster).list_namespaced_custom_object(GROUP, v, ns, LQ)
    assert listed["kind"] == "LocalQueueList"
    assert listed["metadata"]["resourceVersion"]
    assert [o["metadata"]["name"] for o in listed["items"]] == ["lq"]
    got["spec"]["stopPolicy"] = "Hold"
    replaced = api(cluster).replace_namespaced_custom_object(GROUP, v, ns, LQ, "lq", got)
    assert replaced["spec"]["stopPolicy"] == "Hold"
    assert int(replaced["metadata"]["resourceVersion"]) > int(got["metadata"]["resourceVersion"])
    deleted = api(cluster).delete_namespaced_custom_object(GROUP, v, ns, LQ, "lq")
    assert deleted["status"] == "Success" or deleted.get("kind") == "LocalQueue"
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).get_namespaced_custom_object(GROUP, v, ns, LQ, "lq")
    assert caught.value.status == 404


def test_cluster_scoped_crud(cluster: Cluster) -> None:
    v, name = cluster.version(GROUP), cluster.unique("rf")
    cluster.cleanup_cluster_scoped(GROUP, RF, name)
    created = api(cluster).create_cluster_custom_object(
        GROUP, v, RF, resource_flavor(cluster, name, nodeLabels={"pool": "a"})
    )
    assert "namespace" not in created["metadata"]
    created["spec"]["nodeLabels"] = {"pool": "b"}
    replaced = api(cluster).replace_cluster_custom_object(GROUP, v, RF, name, created)
    assert replaced["spec"]["nodeLabels"] == {"pool": "b"}
    selector = ",".join(f"{k}={val}" for k, val in cluster.run_label.items())
    listed = api(cluster).list_cluster_custom_object(GROUP, v, RF, label_selector=selector)
    assert name in [o["metadata"]["name"] for o in listed["items"]]
    api(cluster).delete_cluster_custom_object(GROUP, v, RF, name)
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).get_cluster_custom_object(GROUP, v, RF, name)
    assert caught.value.status == 404


def test_not_found_status(cluster: Cluster) -> None:
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).get_namespaced_custom_object(
            GROUP, cluster.version(GROUP), cluster.namespace, LQ, "missing"
        )
    body = status_of(caught.value)
    assert (body["kind"], body["status"], body["reason"], body["code"]) == (
        "Status",
        "Failure",
        "NotFound",
        404,
    )
    assert body["message"] == f'{LQ}.{GROUP} "missing" not found'
    assert body["details"] == {"name": "missing", "group": GROUP, "kind": LQ}


def test_already_exists_status(cluster: Cluster) -> None:
    create_queue(cluster, "lq")
    with pytest.raises(kubernetes.client.ApiException) as caught:
        create_queue(cluster, "lq")
    body = status_of(caught.value)
    assert (caught.value.status, body["reason"]) == (409, "AlreadyExists")
    assert body["message"] == f'{LQ}.{GROUP} "lq" already exists'


def test_stale_resource_version_conflicts(cluster: Cluster) -> None:
    v, ns = cluster.version(GROUP), cluster.namespace
    stale = create_queue(cluster, "lq")
    api(cluster).patch_namespaced_custom_object(
        GROUP, v, ns, LQ, "lq", {"metadata": {"labels": {"touched": "yes"}}}
    )
    stale["spec"]["stopPolicy"] = "Hold"
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).replace_namespaced_custom_object(GROUP, v, ns, LQ, "lq", stale)
    body = status_of(caught.value)
    assert (caught.value.status, body["reason"]) == (409, "Conflict")
    assert "the object has been modified" in body["message"]


def test_invalid_names_the_field(cluster: Cluster) -> None:
    body = local_queue(cluster, "lq", stopPolicy="Sometimes")
    body["spec"]["clusterQueue"] = 42
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).create_namespaced_custom_object(
            GROUP, cluster.version(GROUP), cluster.namespace, LQ, body
        )
    status = status_of(caught.value)
    assert (caught.value.status, status["reason"]) == (422, "Invalid")
    assert status["details"]["name"] == "lq"
    fields = {c["field"] for c in status["details"]["causes"]}
    assert {"spec.clusterQueue", "spec.stopPolicy"} <= fields


def test_dry_run_stores_nothing(cluster: Cluster) -> None:
    v, ns = cluster.version(GROUP), cluster.namespace
    obj = api(cluster).create_namespaced_custom_object(
        GROUP, v, ns, LQ, local_queue(cluster, "lq"), dry_run="All"
    )
    assert obj["metadata"]["name"] == "lq"
    assert not obj["metadata"].get("resourceVersion")
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).get_namespaced_custom_object(GROUP, v, ns, LQ, "lq")
    assert caught.value.status == 404


def test_field_validation_strict_rejects_unknown_fields(cluster: Cluster) -> None:
    body = local_queue(cluster, "lq", foo="bar")
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).create_namespaced_custom_object(
            GROUP, cluster.version(GROUP), cluster.namespace, LQ, body, field_validation="Strict"
        )
    status = status_of(caught.value)
    assert (caught.value.status, status["reason"]) == (400, "BadRequest")
    assert 'unknown field "spec.foo"' in status["message"]


def test_field_validation_warn_prunes_and_warns(cluster: Cluster) -> None:
    body = local_queue(cluster, "lq", foo="bar")
    obj, _, headers = api(cluster).create_namespaced_custom_object_with_http_info(
        GROUP, cluster.version(GROUP), cluster.namespace, LQ, body, field_validation="Warn"
    )
    assert "foo" not in obj["spec"]
    assert 'unknown field \\"spec.foo\\"' in headers.get("Warning", "")


def test_finalizers_hold_deletion(cluster: Cluster) -> None:
    v, ns = cluster.version(GROUP), cluster.namespace
    body = local_queue(cluster, "lq")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    api(cluster).create_namespaced_custom_object(GROUP, v, ns, LQ, body)
    try:
        api(cluster).delete_namespaced_custom_object(GROUP, v, ns, LQ, "lq")
        held = api(cluster).get_namespaced_custom_object(GROUP, v, ns, LQ, "lq")
        assert held["metadata"]["deletionTimestamp"]
        assert held["metadata"]["finalizers"] == ["example.com/hold"]
    finally:
        api(cluster).patch_namespaced_custom_object(
            GROUP, v, ns, LQ, "lq", {"metadata": {"finalizers": None}}
        )
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).get_namespaced_custom_object(GROUP, v, ns, LQ, "lq")
    assert caught.value.status == 404


def test_generation_moves_with_spec_only(cluster: Cluster) -> None:
    v, ns = cluster.version(GROUP), cluster.namespace
    assert create_queue(cluster, "lq")["metadata"]["generation"] == 1
    labelled = api(cluster).patch_namespaced_custom_object(
        GROUP, v, ns, LQ, "lq", {"metadata": {"labels": {"a": "b"}}}
    )
    assert labelled["metadata"]["generation"] == 1
    status = api(cluster).patch_namespaced_custom_object_status(
        GROUP, v, ns, LQ, "lq", {"status": {"pendingWorkloads": 1}}
    )
    assert status["metadata"]["generation"] == 1
    spec = api(cluster).patch_namespaced_custom_object(
        GROUP, v, ns, LQ, "lq", {"spec": {"stopPolicy": "Hold"}}
    )
    assert spec["metadata"]["generation"] == 2
