"""Contract: merge, JSON and apply patches, strategic merge refused, the status subresource."""

from __future__ import annotations

import kubernetes
import pytest
from contract_backend import Cluster
from contract_support import (
    GROUP,
    LQ,
    api,
    call,
    create_queue,
    local_queue,
    queue_path,
    status_of,
)


def test_merge_patch(cluster: Cluster) -> None:
    create_queue(cluster, "lq", labels={"keep": "1", "drop": "1"})
    patched = api(cluster).patch_namespaced_custom_object(
        GROUP,
        cluster.version(GROUP),
        cluster.namespace,
        LQ,
        "lq",
        {"metadata": {"labels": {"drop": None, "new": "1"}}, "spec": {"stopPolicy": "Hold"}},
    )
    assert patched["metadata"]["labels"] == {"keep": "1", "new": "1"}
    assert patched["spec"]["stopPolicy"] == "Hold"


def test_json_patch(cluster: Cluster) -> None:
    create_queue(cluster, "lq")
    ops = [
        {"op": "test", "path": "/spec/clusterQueue", "value": "contract-cq"},
        {"op": "add", "path": "/spec/stopPolicy", "value": "HoldAndDrain"},
        {"op": "add", "path": "/metadata/labels", "value": {"a": "b"}},
    ]
    patched = call(cluster, "PATCH", queue_path(cluster, "lq"), ops, "application/json-patch+json")
    assert patched["spec"]["stopPolicy"] == "HoldAndDrain"
    assert patched["metadata"]["labels"] == {"a": "b"}
    failing = [{"op": "test", "path": "/spec/clusterQueue", "value": "other"}]
    with pytest.raises(kubernetes.client.ApiException) as caught:
        call(cluster, "PATCH", queue_path(cluster, "lq"), failing, "application/json-patch+json")
    assert caught.value.status == 422


def test_apply_patch_creates_then_updates_and_records_the_manager(cluster: Cluster) -> None:
    body = local_queue(cluster, "lq")
    query = [("fieldManager", "contract-suite")]
    path = queue_path(cluster, "lq")
    created = call(cluster, "PATCH", path, body, "application/apply-patch+yaml", query)
    assert created["metadata"]["generation"] == 1
    body["spec"]["stopPolicy"] = "Hold"
    updated = call(cluster, "PATCH", path, body, "application/apply-patch+yaml", query)
    assert updated["spec"]["stopPolicy"] == "Hold"
    managers = {m["manager"] for m in updated["metadata"]["managedFields"]}
    assert "contract-suite" in managers


def test_apply_patch_needs_a_field_manager(cluster: Cluster) -> None:
    body = local_queue(cluster, "lq")
    with pytest.raises(kubernetes.client.ApiException) as caught:
        call(cluster, "PATCH", queue_path(cluster, "lq"), body, "application/apply-patch+yaml")
    assert caught.value.status == 422
    assert "fieldManager" in status_of(caught.value)["message"]


def test_strategic_merge_patch_is_unsupported_for_custom_resources(cluster: Cluster) -> None:
    create_queue(cluster, "lq")
    with pytest.raises(kubernetes.client.ApiException) as caught:
        call(
            cluster,
            "PATCH",
            queue_path(cluster, "lq"),
            {"spec": {"stopPolicy": "Hold"}},
            "application/strategic-merge-patch+json",
        )
    assert caught.value.status == 415
    assert status_of(caught.value)["reason"] == "UnsupportedMediaType"


def test_status_subresource_isolation(cluster: Cluster) -> None:
    v, ns = cluster.version(GROUP), cluster.namespace
    body = local_queue(cluster, "lq")
    body["status"] = {"pendingWorkloads": 5}
    created = api(cluster).create_namespaced_custom_object(GROUP, v, ns, LQ, body)
    assert (created.get("status") or {}).get("pendingWorkloads") != 5  # create drops status
    through_status = api(cluster).patch_namespaced_custom_object_status(
        GROUP,
        v,
        ns,
        LQ,
        "lq",
        {"spec": {"stopPolicy": "Hold"}, "status": {"pendingWorkloads": 3}},
    )
    assert through_status["status"]["pendingWorkloads"] == 3
    assert (
        "stopPolicy" not in through_status["spec"] or through_status["spec"]["stopPolicy"] != "Hold"
    )
    through_main = api(cluster).patch_namespaced_custom_object(
        GROUP, v, ns, LQ, "lq", {"status": {"pendingWorkloads": 9}}
    )
    assert through_main["status"].get("pendingWorkloads") != 9
