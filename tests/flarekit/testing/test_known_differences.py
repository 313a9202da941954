"""Where FakeCluster knowingly answers differently from kube-apiserver v1.36.

Each test shows FakeCluster's side of one difference listed in docs/fakecluster.md ("Known
differences"); the docstring says what the real server does. The real server is right: a
test here is a reminder of what FakeCluster does not (yet) do, not a specification.
"""

from __future__ import annotations

import json
from typing import Any

import kubernetes
from fakecluster_support import Raw

from flarekit.testing import FakeCluster, rule

ApiException = kubernetes.client.ApiException


def test_anonymous_resource_requests_are_unauthorized(cluster: FakeCluster) -> None:
    """kube-apiserver with anonymous auth on (its default) answers 403 for
    `system:anonymous`; FakeCluster (like a server run with --anonymous-auth=false) 401."""
    reply = Raw(cluster, "")("GET", "/api/v1/namespaces")
    assert reply.status == 401


def test_pod_update_forbidden_without_the_spec_diff(client: Any, ns: str) -> None:
    """kube-apiserver appends a diff of the pod spec to this message."""
    core = kubernetes.client.CoreV1Api(client)
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}}
    core.create_namespaced_pod(ns, body)
    try:
        core.patch_namespaced_pod("p", ns, {"spec": {"containers": [{"name": "c", "args": ["x"]}]}})
    except ApiException as exc:
        message = json.loads(exc.body)["message"]
    assert message.endswith("(allow it to be set to 1 if it was previously negative)")


def test_unlisted_fields_of_built_in_kinds_are_kept(raw: Raw, ns: str) -> None:
    """kube-apiserver drops a field the Pod type does not have, with a `unknown field`
    warning; FakeCluster's pod schema spells out part of the spec and keeps the rest."""
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "extra"},
        "spec": {"containers": [{"name": "c", "image": "i:1"}], "notAField": 1},
    }
    made = json.loads(raw("POST", f"/api/v1/namespaces/{ns}/pods", body).data)
    assert made["spec"]["notAField"] == 1


def test_rules_review_does_not_show_deny_rules(cluster: FakeCluster, ns: str) -> None:
    """RBAC has no deny rules; FakeCluster's `deny(...)` is invisible to a rules review."""
    token = cluster.add_user(f"denied-{ns}", allow=[rule(verb="get")])
    cluster.deny(verb="get", resource="secrets", user=f"denied-{ns}")
    try:
        reply = Raw(cluster, token)(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            {"spec": {"namespace": ns}},
        )
        status = json.loads(reply.data)["status"]
        assert {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]} in status["resourceRules"]
        assert status["incomplete"] is False
    finally:
        cluster.clear_denies()


def test_protobuf_responses_are_json(raw: Raw) -> None:
    """kube-apiserver answers protobuf when it is the first accepted type; FakeCluster
    answers JSON (which every client that asks for protobuf also accepts)."""
    reply = raw.pool.request(
        "GET",
        raw.cluster.url + "/api/v1/namespaces/default",
        headers={
            "Authorization": f"Bearer {raw.token}",
            "Accept": "application/vnd.kubernetes.protobuf,application/json",
        },
    )
    assert reply.headers["Content-Type"] == "application/json"


def test_nodes_are_not_served(raw: Raw) -> None:
    """Pods are bound to simulated node names, but there are no Node objects."""
    assert raw("GET", "/api/v1/nodes").status == 404
