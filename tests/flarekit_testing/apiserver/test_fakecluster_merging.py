"""Server-side apply driven by list and map types, strategic merge of built-in kinds, and
Kueue's version conversion, each as kube-apiserver (and Kueue's webhook) does them."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from fakecluster_support import Raw

from flarekit_testing import FakeCluster

ApiException = kubernetes.client.ApiException
APPLY = "application/apply-patch+yaml"
STRATEGIC = "application/strategic-merge-patch+json"


def pod(ns: str, image: str = "busybox:1.36", **extra: Any) -> dict[str, Any]:
    containers = [
        {"name": "main", "image": image, "env": [{"name": "A", "value": "1"}]},
        {"name": "side", "image": "busybox:1.36"},
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": ns},
        "spec": {"containers": containers, **extra},
    }


def apply(raw: Raw, path: str, body: dict[str, Any], manager: str) -> Any:
    reply = raw("PATCH", f"{path}?fieldManager={manager}", body, content_type=APPLY)
    return reply.status, json.loads(reply.data)


def test_two_managers_applying_the_same_list_items_share_them(raw: Raw, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods/p"
    assert apply(raw, path, pod(ns), "first")[0] == 201
    code, shared = apply(raw, path, pod(ns), "second")
    assert code == 200
    managers = {m["manager"]: m["fieldsV1"] for m in shared["metadata"]["managedFields"]}
    assert set(managers) == {"first", "second"}
    containers = managers["second"]["f:spec"]["f:containers"]
    assert set(containers) == {'k:{"name":"main"}', 'k:{"name":"side"}'}
    assert "." in containers['k:{"name":"main"}']  # the item itself is owned
    code, conflict = apply(raw, path, pod(ns, image="busybox:1.37"), "second")
    assert code == 409
    assert conflict["details"]["causes"][0]["field"] == '.spec.containers[name="main"].image'


def test_apply_removes_only_what_the_manager_stopped_applying(raw: Raw, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps/c"
    first = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": ns}}
    apply(raw, path, {**first, "data": {"a": "1", "b": "2"}}, "one")
    apply(raw, path, {**first, "data": {"c": "3"}}, "two")
    code, left = apply(raw, path, {**first, "data": {"a": "1"}}, "one")
    assert code == 200 and left["data"] == {"a": "1", "c": "3"}


def test_strategic_merge_merges_by_key_and_orders_like_apimachinery(client: Any, ns: str) -> None:
    core = kubernetes.client.CoreV1Api(client)
    body = {
        "metadata": {"name": "svc"},
        "spec": {
            "selector": {"a": "b"},
            "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        },
    }
    core.create_namespaced_service(ns, body)
    patched = core.patch_namespaced_service(
        "svc",
        ns,
        {
            "spec": {
                "ports": [{"port": 80, "targetPort": 8080}, {"port": 9090, "name": "metrics"}],
                "selector": {"c": "d"},
            }
        },
    )
    # as kube-apiserver answers: patch items in patch order, live-only items after them
    ports = [(p.name, p.port, p.target_port) for p in patched.spec.ports]
    assert ports == [("http", 80, 8080), ("metrics", 9090, 9090), ("https", 443, 443)]
    assert patched.spec.selector == {"a": "b", "c": "d"}
    ordered = core.patch_namespaced_service(
        "svc",
        ns,
        {
            "spec": {
                "$setElementOrder/ports": [{"port": 9090}, {"port": 443}, {"port": 80}],
                "ports": [{"port": 443, "$patch": "delete"}],
            }
        },
    )
    assert [p.name for p in ordered.spec.ports] == ["metrics", "http"]


def test_strategic_merge_of_a_pod_image_keeps_the_other_containers(
    cluster: FakeCluster, client: Any, ns: str
) -> None:
    core = kubernetes.client.CoreV1Api(client)
    core.create_namespaced_pod(ns, pod(ns))
    patch = {"spec": {"containers": [{"name": "side", "image": "busybox:1.37"}]}}
    patched = core.patch_namespaced_pod("p", ns, patch)
    assert [(c.name, c.image) for c in patched.spec.containers] == [
        ("main", "busybox:1.36"),
        ("side", "busybox:1.37"),
    ]
    with pytest.raises(ApiException) as forbidden:
        core.patch_namespaced_pod(
            "p", ns, {"spec": {"containers": [{"name": "main", "env": [{"name": "B"}]}]}}
        )
    assert forbidden.value.status == 422


def test_kueue_versions_are_converted_as_kueues_webhook_does() -> None:
    with FakeCluster(releases={"kueue": "v0.19.2"}) as fc:
        fc.create(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": "cq"},
                "spec": {"cohortName": "team"},
            }
        )
        with fc.api_client() as c:
            api = kubernetes.client.CustomObjectsApi(c)
            old = api.get_cluster_custom_object("kueue.x-k8s.io", "v1beta1", "clusterqueues", "cq")
            assert old["spec"]["cohort"] == "team" and "cohortName" not in old["spec"]
            api.patch_cluster_custom_object(
                "kueue.x-k8s.io", "v1beta1", "clusterqueues", "cq", {"spec": {"cohort": "other"}}
            )
        stored = fc.get("clusterqueues", "cq")
        assert stored is not None and stored["spec"]["cohortName"] == "other"
        assert "cohort" not in stored["spec"]
