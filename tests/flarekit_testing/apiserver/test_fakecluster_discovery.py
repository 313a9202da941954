"""Discovery documents and namespaces, read through the kubernetes client."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, gadget_crd, status_of, widget, widget_crd

from flarekit_testing import CRDError, FakeCluster

ApiException = kubernetes.client.ApiException


def test_version(client: Any) -> None:
    info = kubernetes.client.VersionApi(client).get_code()
    assert (info.major, info.minor) == ("1", "36")  # the control plane release it follows


def test_core_api(client: Any, cluster: FakeCluster) -> None:
    versions = kubernetes.client.CoreApi(client).get_api_versions()
    assert versions.versions == ["v1"]
    assert versions.server_address_by_client_cid_rs[0].server_address == f"127.0.0.1:{cluster.port}"
    resources = kubernetes.client.CoreV1Api(client).get_api_resources()
    names = {r.name: r for r in resources.resources}
    assert names["namespaces"].namespaced is False
    assert names["namespaces"].kind == "Namespace"


def test_group_list_prefers_highest_priority_version(client: Any) -> None:
    groups = kubernetes.client.ApisApi(client).get_api_versions().groups
    ours = next(g for g in groups if g.name == GROUP)
    assert [v.version for v in ours.versions] == ["v1", "v1beta1"]  # v1alpha1 is not served
    assert ours.preferred_version.group_version == f"{GROUP}/v1"


def test_preferred_version_is_not_the_storage_version() -> None:
    crd = widget_crd()
    for version in crd["spec"]["versions"]:
        version["storage"] = version["name"] == "v1beta1"
    with FakeCluster(crds=[crd]) as fc, fc.api_client() as c:
        group = kubernetes.client.ApisApi(c).get_api_versions().groups[0]
        assert group.preferred_version.version == "v1"


def test_resource_list(raw: Raw) -> None:
    doc = raw("GET", f"/apis/{GROUP}/v1").json()
    assert doc["kind"] == "APIResourceList"
    assert doc["groupVersion"] == f"{GROUP}/v1"
    by_name = {r["name"]: r for r in doc["resources"]}
    assert set(by_name) == {"widgets", "widgets/status", "widgets/scale", "gadgets"}
    main = by_name["widgets"]
    assert main["singularName"] == "widget"
    assert main["namespaced"] is True
    assert main["shortNames"] == ["wd"]
    assert main["categories"] == ["all", "toys"]
    assert set(main["verbs"]) == {
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    }
    assert by_name["widgets/status"]["verbs"] == ["get", "patch", "update"]
    assert by_name["widgets/scale"]["group"] == "autoscaling"
    assert by_name["widgets/scale"]["kind"] == "Scale"
    assert by_name["gadgets"]["namespaced"] is False
    assert "gadgets/status" not in by_name


def test_group_document_and_unknown_group(raw: Raw) -> None:
    assert raw("GET", f"/apis/{GROUP}").json()["preferredVersion"]["version"] == "v1"
    missing = raw("GET", "/apis/nothing.io")
    assert missing.status == 404
    assert missing.json()["reason"] == "NotFound"


def test_namespaces_lifecycle(client: Any, api: Any) -> None:
    core = kubernetes.client.CoreV1Api(client)
    names = {n.metadata.name for n in core.list_namespace().items}
    assert {"default", "kube-system"} <= names
    created = core.create_namespace(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scratch"}}
    )
    assert created.status.phase == "Active"
    assert created.metadata.labels == {"kubernetes.io/metadata.name": "scratch"}
    api.create_namespaced_custom_object(GROUP, "v1", "scratch", "widgets", widget("w"))
    core.delete_namespace("scratch")
    with pytest.raises(ApiException) as err:
        core.read_namespace("scratch")
    assert err.value.status == 404
    assert status_of(err.value)["message"] == 'namespaces "scratch" not found'
    with pytest.raises(ApiException) as err:
        api.get_namespaced_custom_object(GROUP, "v1", "scratch", "widgets", "w")
    assert err.value.status == 404


def test_namespace_with_finalized_content_terminates(client: Any, api: Any) -> None:
    core = kubernetes.client.CoreV1Api(client)
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "slow"}})
    body = widget("held")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    api.create_namespaced_custom_object(GROUP, "v1", "slow", "widgets", body)
    core.delete_namespace("slow")
    terminating = core.read_namespace("slow")
    assert terminating.status.phase == "Terminating"
    assert terminating.metadata.deletion_timestamp is not None
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", "slow", "widgets", widget("late"))
    assert err.value.status == 403
    assert "because it is being terminated" in status_of(err.value)["message"]
    held = api.get_namespaced_custom_object(GROUP, "v1", "slow", "widgets", "held")
    assert held["metadata"]["deletionTimestamp"]
    api.patch_namespaced_custom_object(
        GROUP, "v1", "slow", "widgets", "held", {"metadata": {"finalizers": None}}
    )
    with pytest.raises(ApiException) as err:
        core.read_namespace("slow")
    assert err.value.status == 404


def test_default_namespace_cannot_be_deleted(client: Any) -> None:
    with pytest.raises(ApiException) as err:
        kubernetes.client.CoreV1Api(client).delete_namespace("default")
    assert err.value.status == 403


def test_invalid_namespace_name(client: Any) -> None:
    with pytest.raises(ApiException) as err:
        kubernetes.client.CoreV1Api(client).create_namespace(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_Name"}}
        )
    assert err.value.status == 422
    assert status_of(err.value)["details"]["causes"][0]["field"] == "metadata.name"


def test_malformed_crd_names_the_field() -> None:
    crd = gadget_crd()
    crd["spec"]["scope"] = "Everywhere"
    with pytest.raises(CRDError, match=r"spec\.scope must be one of 'Namespaced', 'Cluster'"):
        FakeCluster(crds=[crd])
    crd = gadget_crd()
    crd["spec"]["versions"][0]["storage"] = False
    with pytest.raises(CRDError, match="exactly one storage version"):
        FakeCluster(crds=[crd])
