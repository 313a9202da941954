"""Server-side apply as kube-apiserver does it, on FakeCluster and on the real control plane:
list-map keys the server defaults, ownership after a forced takeover, and which fields a
create or an update makes its manager own."""

from __future__ import annotations

from typing import Any

from agreement_support import send

APPLY = "application/apply-patch+yaml"
JSON = dict[str, Any]


def raycluster(ns: str) -> JSON:
    """As codeflare-sdk renders one: head ports without `protocol`, one worker group."""
    container = {
        "name": "ray-head",
        "image": "rayproject/ray:2.40.0",
        "ports": [
            {"containerPort": 6379, "name": "gcs"},
            {"containerPort": 8265, "name": "dashboard"},
        ],
    }
    worker = {"name": "ray-worker", "image": "rayproject/ray:2.40.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": ns},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [worker]}},
                }
            ],
        },
    }


def apply(server: Any, path: str, body: JSON, manager: str, force: bool = False) -> Any:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    return send(server, "PATCH", path + query, body, content_type=APPLY)


def causes(answer: Any) -> list[str]:
    return [c["field"] for c in answer.body["details"]["causes"]]


def test_applied_ports_without_protocol_are_the_stored_tcp_ports(
    api_server: Any, api_namespace: str
) -> None:
    """The server defaults a list-map key (`protocol: TCP`) in the applied configuration
    before it merges: re-applying, forcing and dry-running the same configuration change
    nothing instead of adding a second, duplicate port; a second manager's identical apply
    conflicts only on the worker groups, which the CRD's defaults made differ."""
    path = f"/apis/ray.io/v1/namespaces/{api_namespace}/rayclusters/rc"
    body = raycluster(api_namespace)
    assert apply(api_server, path, body, "first").status == 201
    again = apply(api_server, path, body, "first")
    assert again.status == 200, again.text
    ports = again.body["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]
    assert [(p["containerPort"], p["protocol"]) for p in ports] == [(6379, "TCP"), (8265, "TCP")]
    dry = send(
        api_server, "PATCH", path + "?fieldManager=first&dryRun=All", body, content_type=APPLY
    )
    assert dry.status == 200, dry.text
    second = apply(api_server, path, body, "second")
    assert second.status == 409
    assert causes(second) == [".spec.workerGroupSpecs"]
    forced = apply(api_server, path, body, "second", force=True)
    assert forced.status == 200, forced.text
    back = apply(api_server, path, body, "first")
    assert back.status == 409 and causes(back) == [".spec.workerGroupSpecs"]


def test_two_managers_share_pod_ports_applied_without_protocol(
    api_server: Any, api_namespace: str
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": api_namespace},
        "spec": {
            "containers": [
                {"name": "main", "image": "busybox:1.36", "ports": [{"containerPort": 8080}]}
            ]
        },
    }
    path = f"/api/v1/namespaces/{api_namespace}/pods/p"
    assert apply(api_server, path, pod, "first").status == 201
    shared = apply(api_server, path, pod, "second")
    assert shared.status == 200, shared.text
    owned = {m["manager"]: m["fieldsV1"] for m in shared.body["metadata"]["managedFields"]}
    ports = owned["second"]["f:spec"]["f:containers"]['k:{"name":"main"}']["f:ports"]
    assert set(ports) == {'k:{"containerPort":8080,"protocol":"TCP"}'}
