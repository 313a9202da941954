"""Aggregated discovery (``apidiscovery.k8s.io/v2``) on FakeCluster and on the real API server.

A client that asks for it (the Accept header names ``as=APIGroupDiscoveryList``) gets every
group, version and resource of ``/apis`` (or of the core group, ``/api``) in one answer; a
client that does not gets the plain group list. FakeCluster's document for the custom resource
groups is the real server's, field for field and in the same order; for Kubernetes' own groups
it lists the resources it serves (fewer than the real server: docs/fakecluster.md) exactly as
the real server lists them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3

from flarekit_testing import ClusterBackend, ControlPlane, FakeCluster

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#: The custom resource groups both servers serve (the default releases' CRDs).
CUSTOM_GROUPS = (
    "jobset.x-k8s.io",
    "kubeflow.org",
    "kueue.x-k8s.io",
    "ray.io",
    "trainer.kubeflow.org",
    "workload.codeflare.dev",
)


def get(server: ClusterBackend, path: str, accept: str) -> tuple[str, str, Any]:
    """(Content-Type, Vary, body) of a GET of `path` as the admin, asking for `accept`."""
    pool = urllib3.PoolManager(ca_certs=str(server.ca_path))
    answer = pool.request(
        "GET",
        f"{server.url}{path}",
        headers={"Authorization": f"Bearer {server.token}", "Accept": accept},
    )
    assert answer.status == 200, answer.data[:300]
    return (
        answer.headers.get("Content-Type", ""),
        answer.headers.get("Vary", ""),
        json.loads(answer.data),
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeCluster]:
    """A FakeCluster of the default releases, as the session's control plane serves."""
    with FakeCluster() as cluster:
        yield cluster


@pytest.fixture(params=["fakecluster", "controlplane"])
def server(request: pytest.FixtureRequest, fake: FakeCluster) -> ClusterBackend:
    if request.param == "fakecluster":
        return fake
    plane: ControlPlane = request.getfixturevalue("control_plane")
    return plane


@pytest.mark.parametrize("path", ["/apis", "/api"])
def test_one_document_holds_every_group_version_and_resource(
    server: ClusterBackend, path: str
) -> None:
    media, vary, doc = get(server, path, f"{AGGREGATED},application/json")
    assert media == AGGREGATED and vary == "Accept"
    assert (doc["kind"], doc["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    if path == "/api":
        (core,) = doc["items"]
        assert core["metadata"] == {} and [v["version"] for v in core["versions"]] == ["v1"]
        pods = next(r for r in core["versions"][0]["resources"] if r["resource"] == "pods")
        assert pods["responseKind"] == {"group": "", "version": "", "kind": "Pod"}
        return
    kueue = next(i for i in doc["items"] if i["metadata"]["name"] == "kueue.x-k8s.io")
    assert [v["version"] for v in kueue["versions"]] == ["v1beta2", "v1beta1"]  # preferred first
    queues = next(r for r in kueue["versions"][0]["resources"] if r["resource"] == "localqueues")
    assert queues["responseKind"] == {
        "group": "kueue.x-k8s.io",
        "version": "v1beta2",
        "kind": "LocalQueue",
    }
    assert queues["scope"] == "Namespaced" and kueue["versions"][0]["freshness"] == "Current"


def test_without_asking_the_plain_group_list_is_answered(server: ClusterBackend) -> None:
    media, _, doc = get(server, "/apis", "application/json")
    assert media == "application/json" and doc["kind"] == "APIGroupList"
    # The older aggregated version is no longer served by this release: plain JSON again.
    older = AGGREGATED.replace("v=v2;", "v=v2beta1;")
    media, _, doc = get(server, "/apis", f"{older},application/json")
    assert media == "application/json" and doc["kind"] == "APIGroupList"


def _items(doc: Any) -> dict[str, Any]:
    return {item["metadata"].get("name", ""): item for item in doc["items"]}


def test_fakeclusters_document_is_the_real_servers(
    fake: FakeCluster, control_plane: ControlPlane
) -> None:
    for path in ("/apis", "/api"):
        ours = _items(get(fake, path, AGGREGATED)[2])
        real = _items(get(control_plane, path, AGGREGATED)[2])
        assert set(ours) <= set(real)
        assert [g for g in real if g in ours] == list(ours)  # the same order
        for name in CUSTOM_GROUPS if path == "/apis" else ():
            assert ours[name] == real[name], name
        for name in set(ours) - set(CUSTOM_GROUPS):
            for mine, theirs in zip(ours[name]["versions"], real[name]["versions"], strict=False):
                assert mine["version"] == theirs["version"]
                known = {r["resource"]: r for r in theirs["resources"]}
                for resource in mine["resources"]:
                    if name == "apiextensions.k8s.io":
                        continue  # FakeCluster's CRD API is read-only: get and list
                    expected = known[resource["resource"]]
                    subresources = resource.pop("subresources", [])
                    assert all(s in expected.get("subresources", []) for s in subresources)
                    expected = {k: v for k, v in expected.items() if k != "subresources"}
                    assert resource == expected, (name, resource["resource"])
