"""Where FakeCluster knowingly answers differently from kube-apiserver v1.36, on both backends.

Each test runs against FakeCluster and against the real control plane (`control_plane`,
tests/conftest.py) and pins what each answers; every difference is listed in
docs/fakecluster.md ("Known differences"). The real server is right: these tests are
reminders of what FakeCluster does not (yet) do, not a specification.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
import urllib3

from flarekit_testing import FakeCluster, rule

ApiException = kubernetes.client.ApiException


@pytest.fixture(params=["fakecluster", "controlplane"])
def server(request: pytest.FixtureRequest, cluster: FakeCluster) -> Any:
    if request.param == "fakecluster":
        return cluster
    return request.getfixturevalue("control_plane")


def fake(server: Any) -> bool:
    return isinstance(server, FakeCluster)


@pytest.fixture
def namespace(server: Any) -> Iterator[str]:
    name = f"diff-{uuid.uuid4().hex[:8]}"
    with server.api_client() as client:
        core = kubernetes.client.CoreV1Api(client)
        core.create_namespace({"metadata": {"name": name}})
        yield name
        core.delete_namespace(name)


def call(
    server: Any, method: str, path: str, body: Any = None, token: str | None = None, **headers: str
) -> urllib3.BaseHTTPResponse:
    pool = urllib3.PoolManager(ca_certs=str(server.ca_path))
    sent = {"Content-Type": "application/json", **headers}
    if token is None:
        token = server.token
    if token:
        sent["Authorization"] = f"Bearer {token}"
    data = json.dumps(body) if body is not None else None
    return pool.request(method, server.url + path, body=data, headers=sent, retries=False)


def test_anonymous_resource_requests(server: Any) -> None:
    """kube-apiserver with anonymous authentication on (its default) answers 403 for
    `system:anonymous`; FakeCluster answers 401 (as with --anonymous-auth=false)."""
    reply = call(server, "GET", "/api/v1/namespaces", token="")
    assert reply.status == (401 if fake(server) else 403)


def test_pod_update_forbidden_message(server: Any, namespace: str) -> None:
    """kube-apiserver appends a diff of the pod spec to this message; FakeCluster does not."""
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}}
    patch = {"spec": {"containers": [{"name": "c", "args": ["x"]}]}}
    with server.api_client() as client:
        core = kubernetes.client.CoreV1Api(client)
        core.create_namespaced_pod(namespace, body)
        with pytest.raises(ApiException) as err:
            core.patch_namespaced_pod("p", namespace, patch)
    message = json.loads(err.value.body)["message"]
    assert "pod updates may not change fields other than" in message
    assert ("@@" in message) is not fake(server)


def test_unlisted_fields_of_built_in_kinds(server: Any, namespace: str) -> None:
    """kube-apiserver drops a field the Pod type does not have, with a warning; FakeCluster's
    pod schema spells out part of the spec and keeps the rest as given."""
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "extra"},
        "spec": {"containers": [{"name": "c", "image": "i:1"}], "notAField": 1},
    }
    reply = call(server, "POST", f"/api/v1/namespaces/{namespace}/pods", body)
    assert reply.status == 201
    made = json.loads(reply.data)
    assert ("notAField" in made["spec"]) is fake(server)
    warned = "unknown field" in (reply.headers.get("Warning") or "")
    assert warned is not fake(server)


def test_protobuf_responses(server: Any) -> None:
    """kube-apiserver answers protobuf to a client that prefers it; FakeCluster answers JSON
    (which every client that asks for protobuf also accepts)."""
    reply = call(
        server,
        "GET",
        "/api/v1/namespaces/default",
        Accept="application/vnd.kubernetes.protobuf,application/json",
    )
    expected = "application/json" if fake(server) else "application/vnd.kubernetes.protobuf"
    assert reply.headers["Content-Type"] == expected


def test_nodes(server: Any) -> None:
    """FakeCluster binds pods to simulated node names but serves no Node objects."""
    assert call(server, "GET", "/api/v1/nodes").status == (404 if fake(server) else 200)


def test_kueue_v1beta1_reads(server: Any) -> None:
    """FakeCluster converts Kueue's versions as Kueue's webhook does; a control plane with
    Kueue's CRDs but no Kueue (their conversion is `None`) rewrites apiVersion and prunes
    what the version read does not have, so v1beta1 shows neither cohort nor cohortName."""
    name = f"cq-{uuid.uuid4().hex[:8]}"
    base = "/apis/kueue.x-k8s.io"
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {"cohortName": "team"},
    }
    if fake(server):  # the module's FakeCluster serves test CRDs only
        with FakeCluster(releases={"kueue": "v0.19.2"}) as kueue:
            spec = _v1beta1_spec(kueue, base, name, body)
    else:
        spec = _v1beta1_spec(server, base, name, body)
    if fake(server):
        assert spec.get("cohort") == "team" and "cohortName" not in spec
    else:
        assert "cohort" not in spec and "cohortName" not in spec


def _v1beta1_spec(server: Any, base: str, name: str, body: dict[str, Any]) -> Any:
    assert call(server, "POST", f"{base}/v1beta2/clusterqueues", body).status == 201
    try:
        return json.loads(call(server, "GET", f"{base}/v1beta1/clusterqueues/{name}").data)["spec"]
    finally:
        call(server, "DELETE", f"{base}/v1beta2/clusterqueues/{name}")


def test_rules_review_does_not_show_deny_rules(cluster: FakeCluster, ns: str) -> None:
    """RBAC has no deny rules; FakeCluster's `deny(...)` (which ControlPlane does not offer) is
    invisible to a rules review."""
    token = cluster.add_user(f"denied-{ns}", allow=[rule(verb="get")])
    cluster.deny(verb="get", resource="secrets", user=f"denied-{ns}")
    try:
        reply = call(
            cluster,
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            {"spec": {"namespace": ns}},
            token=token,
        )
        status = json.loads(reply.data)["status"]
        wanted = {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]}
        assert wanted in status["resourceRules"]
        assert status["incomplete"] is False
    finally:
        cluster.clear_denies()
