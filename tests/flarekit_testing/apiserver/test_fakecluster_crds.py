"""The read-only CustomResourceDefinition API: the CRDs a FakeCluster serves, RBAC-deniable."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, widget_crd

from flarekit_testing import FakeCluster, rule

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def test_get_returns_the_crd_as_started_with_server_fields(cluster: FakeCluster, raw: Raw) -> None:
    reply = raw("GET", f"{CRDS}/widgets.{GROUP}")
    assert reply.status == 200
    crd = reply.json()
    assert crd["spec"] == widget_crd()["spec"]
    assert crd["metadata"]["name"] == f"widgets.{GROUP}"
    assert crd["metadata"]["uid"] and crd["metadata"]["resourceVersion"]
    assert crd["status"]["storedVersions"] == ["v1"]
    established = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert established["Established"] == "True"


def test_list_and_name_selector(raw: Raw) -> None:
    names = [c["metadata"]["name"] for c in raw("GET", CRDS).json()["items"]]
    assert names == sorted([f"widgets.{GROUP}", f"gadgets.{GROUP}"])
    one = raw("GET", f"{CRDS}?fieldSelector=metadata.name%3Dgadgets.{GROUP}").json()
    assert [c["metadata"]["name"] for c in one["items"]] == [f"gadgets.{GROUP}"]
    assert raw("GET", f"{CRDS}?fieldSelector=spec.group%3Dx").status == 400


def test_missing_crd_is_404_and_writes_are_refused(raw: Raw) -> None:
    missing = raw("GET", f"{CRDS}/nothings.example.com")
    assert missing.status == 404
    assert missing.json()["details"] == {
        "name": "nothings.example.com",
        "group": "apiextensions.k8s.io",
        "kind": "customresourcedefinitions",
    }
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        target = CRDS if method == "POST" else f"{CRDS}/widgets.{GROUP}"
        assert raw(method, target, {}).status == 405
    assert raw("GET", f"{CRDS}?watch=true").status == 405


def test_discovery_lists_the_group(raw: Raw, client: Any) -> None:
    groups = kubernetes.client.ApisApi(client).get_api_versions().groups
    assert "apiextensions.k8s.io" in [g.name for g in groups]
    resources = raw("GET", "/apis/apiextensions.k8s.io/v1").json()["resources"]
    assert [(r["name"], r["verbs"]) for r in resources] == [
        ("customresourcedefinitions", ["get", "list"])
    ]
    assert raw("GET", "/apis/apiextensions.k8s.io").json()["preferredVersion"]["version"] == "v1"


def test_reading_crds_can_be_denied() -> None:
    with FakeCluster(crds=[widget_crd()]) as fc:
        fc.deny(["get", "list"], "customresourcedefinitions")
        reply = Raw(fc)("GET", f"{CRDS}/widgets.{GROUP}")
        assert reply.status == 403
        assert 'cannot get resource "customresourcedefinitions"' in reply.json()["message"]
        assert Raw(fc)("GET", CRDS).status == 403
        fc.clear_denies()
        user = fc.add_user("reader", allow=[rule("get", "widgets")])
        assert Raw(fc, token=user)("GET", f"{CRDS}/widgets.{GROUP}").status == 403
        assert Raw(fc)("GET", f"{CRDS}/widgets.{GROUP}").status == 200


@pytest.mark.parametrize("release", ["v0.10.6", "v0.19.2"])
def test_release_crds_are_served(release: str) -> None:
    from flarekit_models._crds import crds_for

    with FakeCluster(releases={"kueue": release}) as fc, fc.api_client() as client:
        api = kubernetes.client.ApiextensionsV1Api(client)
        listed = api.list_custom_resource_definition()
        expected = {c["metadata"]["name"] for c in crds_for({"kueue": release})}
        assert {c.metadata.name for c in listed.items} == expected
        crd = api.read_custom_resource_definition("localqueues.kueue.x-k8s.io")
        assert crd.status.stored_versions == ["v1beta2" if release == "v0.19.2" else "v1beta1"]
