"""What clients read besides objects: review APIs, health, OpenAPI v2/v3 and Table output,
as kube-apiserver v1.36 answers them (shapes checked there)."""

from __future__ import annotations

import json
from typing import Any

import urllib3
from fakecluster_support import GROUP, Raw, widget

from flarekit_testing import FakeCluster, rule

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def review(raw: Raw, kind: str, body: dict[str, Any]) -> Any:
    group = "authentication.k8s.io" if kind.endswith("reviews") and "access" not in kind else ""
    group = "authorization.k8s.io" if "access" in kind or "rules" in kind else group
    reply = raw("POST", f"/apis/{group}/v1/{kind}", body)
    return reply.status, json.loads(reply.data)


def test_self_subject_access_review_follows_the_rules(cluster: FakeCluster, ns: str) -> None:
    viewer = cluster.add_user(f"viewer-{ns}", allow=[rule(verb=["get", "list"], namespace=ns)])
    ask = {"spec": {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": ns}}}
    code, answer = review(Raw(cluster, viewer), "selfsubjectaccessreviews", ask)
    assert code == 201 and answer["status"] == {"allowed": True}
    assert answer["kind"] == "SelfSubjectAccessReview"  # filled in from the URL
    ask["spec"]["resourceAttributes"]["verb"] = "delete"
    assert review(Raw(cluster, viewer), "selfsubjectaccessreviews", ask)[1]["status"] == {
        "allowed": False
    }
    code, answer = review(Raw(cluster, viewer), "selfsubjectaccessreviews", {"spec": {}})
    assert code == 422 and "exactly one of nonResourceAttributes" in answer["message"]


def test_rules_review_lists_what_a_user_may_do(cluster: FakeCluster, raw: Raw, ns: str) -> None:
    code, admin = review(raw, "selfsubjectrulesreviews", {"spec": {"namespace": ns}})
    assert code == 201
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]} in admin["status"][
        "resourceRules"
    ]
    viewer = cluster.add_user(f"ruled-{ns}", allow=[rule(verb="get", resource="pods")])
    _, ruled = review(Raw(cluster, viewer), "selfsubjectrulesreviews", {"spec": {"namespace": ns}})
    rules = ruled["status"]["resourceRules"]
    assert {"verbs": ["get"], "apiGroups": ["*"], "resources": ["pods"]} in rules
    assert all(r["verbs"] != ["*"] for r in rules)


def test_who_am_i_and_token_reviews(cluster: FakeCluster, raw: Raw, ns: str) -> None:
    code, me = review(raw, "selfsubjectreviews", {})
    assert code == 201
    assert me["status"]["userInfo"] == {
        "username": "flarekit-admin",
        "uid": "flarekit-admin",
        "groups": ["system:masters", "system:authenticated"],
    }
    token = cluster.add_user(f"someone-{ns}")
    _, known = review(raw, "tokenreviews", {"spec": {"token": token}})
    assert known["status"]["authenticated"] is True
    assert known["status"]["user"]["username"] == f"someone-{ns}"
    _, unknown = review(raw, "tokenreviews", {"spec": {"token": "nope"}})
    assert unknown["status"] == {"user": {}, "error": "invalid bearer token"}
    code, _ = review(Raw(cluster, token), "tokenreviews", {"spec": {"token": token}})
    assert code == 201  # a user with no allow-list may do anything not denied
    limited = cluster.add_user(f"limited-{ns}", allow=[rule(verb="get")])
    assert review(Raw(cluster, limited), "tokenreviews", {"spec": {"token": token}})[0] == 403


def test_health_and_version_need_no_token(cluster: FakeCluster) -> None:
    anonymous = Raw(cluster, "")
    for path in ("/healthz", "/livez", "/readyz"):
        reply = anonymous("GET", path)
        assert (reply.status, reply.data) == (200, b"ok")
    verbose = anonymous("GET", "/readyz?verbose")
    assert verbose.data.decode().endswith("readyz check passed\n")
    assert json.loads(anonymous("GET", "/version").data)["minor"] == "36"
    assert anonymous("GET", "/api").status == 401


def test_openapi_v3_index_and_group_version(raw: Raw) -> None:
    index = json.loads(raw("GET", "/openapi/v3").data)["paths"]
    assert {"api/v1", f"apis/{GROUP}/v1"} <= set(index)
    doc = json.loads(raw("GET", index[f"apis/{GROUP}/v1"]["serverRelativeURL"]).data)
    widget_schema = doc["components"]["schemas"]["com.example.v1.Widget"]
    assert widget_schema["x-kubernetes-group-version-kind"] == [
        {"group": GROUP, "version": "v1", "kind": "Widget"}
    ]
    assert widget_schema["properties"]["spec"]["properties"]["color"]["enum"]
    item = doc["paths"][f"/apis/{GROUP}/v1/namespaces/{{namespace}}/widgets/{{name}}"]
    # kubectl looks for fieldValidation on PATCH before it lets the server validate
    assert "fieldValidation" in [p["name"] for p in item["patch"]["parameters"]]


def test_openapi_v2_has_every_kind(raw: Raw) -> None:
    doc = json.loads(raw("GET", "/openapi/v2").data)
    assert doc["swagger"] == "2.0"
    assert {"io.k8s.api.core.v1.Pod", "com.example.v1.Widget"} <= set(doc["definitions"])


def test_table_of_a_custom_resource_has_name_and_age(cluster: FakeCluster, ns: str) -> None:
    body = widget("w1")
    body["metadata"]["namespace"] = ns
    cluster.create(body)
    pool = urllib3.PoolManager(ca_certs=str(cluster.ca_path))
    reply = pool.request(
        "GET",
        f"{cluster.url}/apis/{GROUP}/v1/namespaces/{ns}/widgets",
        headers={"Authorization": f"Bearer {cluster.token}", "Accept": TABLE},
    )
    table = json.loads(reply.data)
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    [row] = table["rows"]
    assert row["cells"][0] == "w1" and row["cells"][1].endswith("s")
    assert row["object"]["kind"] == "PartialObjectMetadata"


def test_table_of_pods_has_the_pod_printer_columns(cluster: FakeCluster, ns: str) -> None:
    cluster.add_pod(ns, "ready", containers=["a", "b"], phase="Running")
    pool = urllib3.PoolManager(ca_certs=str(cluster.ca_path))
    reply = pool.request(
        "GET",
        f"{cluster.url}/api/v1/namespaces/{ns}/pods",
        headers={"Authorization": f"Bearer {cluster.token}", "Accept": TABLE},
    )
    table = json.loads(reply.data)
    columns = [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0]
    assert columns == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert table["rows"][0]["cells"][:4] == ["ready", "2/2", "Running", "0"]


def test_crd_printer_columns(cluster: FakeCluster) -> None:
    from flarekit_testing.apiserver._tables import CustomColumns

    printer = CustomColumns(
        [
            {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "First tag", "type": "string", "jsonPath": ".spec.tags[0]"},
        ]
    )
    obj = {"metadata": {"name": "x"}, "spec": {"color": "red", "size": 3, "tags": ["a"]}}
    assert [c.name for c in printer.columns()] == ["Name", "Color", "Size", "First tag"]
    assert printer.cells(obj) == ["x", "red", 3, "a"]
    assert printer.cells({"metadata": {"name": "y"}}) == ["y", None, None, None]
