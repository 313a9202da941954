"""Status and scale subresources: which endpoint may change what."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, status_of, widget

from flarekit_testing import FakeCluster

ApiException = kubernetes.client.ApiException


def test_create_drops_status(api: Any, ns: str) -> None:
    body = widget("a")
    body["status"] = {"phase": "Running"}
    out = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    assert "status" not in out


def test_main_endpoint_ignores_status(api: Any, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    api.patch_namespaced_custom_object_status(
        GROUP, "v1", ns, "widgets", "a", {"status": {"phase": "Ready"}}
    )
    out = api.patch_namespaced_custom_object(
        GROUP, "v1", ns, "widgets", "a", {"status": {"phase": "Hacked"}, "spec": {"size": 3}}
    )
    assert out["status"] == {"phase": "Ready"}
    assert out["spec"]["size"] == 3


def test_status_endpoint_ignores_everything_else(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    obj["spec"]["color"] = "blue"
    obj["metadata"]["labels"] = {"sneaky": "yes"}
    obj["status"] = {"phase": "Ready"}
    out = api.replace_namespaced_custom_object_status(GROUP, "v1", ns, "widgets", "a", obj)
    assert out["status"] == {"phase": "Ready"}
    assert out["spec"]["color"] == "red"
    assert "labels" not in out["metadata"]
    assert out["metadata"]["generation"] == 1


def test_status_writes_are_optimistically_locked(api: Any, ns: str) -> None:
    obj = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    api.patch_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", {"spec": {"size": 2}})
    obj["status"] = {"phase": "Ready"}
    with pytest.raises(ApiException) as err:
        api.replace_namespaced_custom_object_status(GROUP, "v1", ns, "widgets", "a", obj)
    assert err.value.status == 409


def test_without_subresource_status_is_an_ordinary_field(api: Any, ns: str) -> None:
    name = f"plain-{ns}"
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "status": {"phase": "Set"},
    }
    out = api.create_cluster_custom_object(GROUP, "v1", "gadgets", body)
    assert out["status"] == {"phase": "Set"}
    again = api.patch_cluster_custom_object(
        GROUP, "v1", "gadgets", name, {"status": {"phase": "New"}}
    )
    assert again["status"] == {"phase": "New"}
    assert again["metadata"]["generation"] == 2  # status changes are spec-like changes here
    with pytest.raises(ApiException) as err:
        api.get_cluster_custom_object_status(GROUP, "v1", "gadgets", name)
    assert err.value.status == 404


def test_scale_subresource(api: Any, ns: str, cluster: FakeCluster) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a", replicas=2))
    cluster.set_status("widgets", "a", {"replicas": 1, "selector": "app=a"}, namespace=ns)
    scale = api.get_namespaced_custom_object_scale(GROUP, "v1", ns, "widgets", "a")
    assert scale["kind"] == "Scale"
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 1, "selector": "app=a"}
    out = api.patch_namespaced_custom_object_scale(
        GROUP, "v1", ns, "widgets", "a", {"spec": {"replicas": 5}}
    )
    assert out["spec"]["replicas"] == 5
    obj = api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a")
    assert obj["spec"]["replicas"] == 5
    assert obj["metadata"]["generation"] == 2
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_custom_object_scale(
            GROUP, "v1", ns, "widgets", "a", {"spec": {"replicas": -1}}
        )
    assert status_of(err.value)["reason"] == "Invalid"
