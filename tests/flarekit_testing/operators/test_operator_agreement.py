"""What the operators' controllers do to objects users make, on FakeCluster with the simulated
operators and on the control plane with the real ones (`stack`, conftest.py): Kueue's queue
finalizers and conditions, KubeRay's head Service and RayJob finalizer."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import urllib3

JSON = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
RAY = "/apis/ray.io/v1"


def send(stack: Any, method: str, path: str, body: Any = None, content_type: str = "") -> Any:
    pool = urllib3.PoolManager(ca_certs=str(stack.ca_path))
    headers = {
        "Authorization": f"Bearer {stack.token}",
        "Content-Type": content_type or "application/json",
    }
    data = None if body is None else json.dumps(body)
    reply = pool.request(method, stack.url + path, body=data, headers=headers)
    return reply.status, json.loads(reply.data)


def eventually(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


def gone(stack: Any, path: str) -> bool:
    return bool(send(stack, "GET", path)[0] == 404)


def active(stack: Any, path: str) -> JSON | None:
    code, found = send(stack, "GET", path)
    assert code == 200
    for c in (found.get("status") or {}).get("conditions") or []:
        if c["type"] == "Active" and c.get("observedGeneration") == found["metadata"]["generation"]:
            return dict(c)
    return None


def test_queues_follow_each_generation_and_go_once_unused(stack: Any) -> None:
    """Kueue's Active condition is rewritten for a new generation (kubectl wait
    --for=condition=Active after a change); its finalizers hold deleted queues until nothing
    uses them, then they go."""
    flavor, queue = f"rf-{uuid.uuid4().hex[:6]}", f"cq-{uuid.uuid4().hex[:6]}"
    send(
        stack,
        "POST",
        f"{KUEUE}/resourceflavors",
        {"metadata": {"name": flavor}, **_kind("ResourceFlavor")},
    )
    resources = [{"name": "cpu", "nominalQuota": 9}]
    group = {"coveredResources": ["cpu"], "flavors": [{"name": flavor, "resources": resources}]}
    cq = {**_kind("ClusterQueue"), "metadata": {"name": queue}, "spec": {"resourceGroups": [group]}}
    code, _ = send(stack, "POST", f"{KUEUE}/clusterqueues", cq)
    assert code == 201
    path = f"{KUEUE}/clusterqueues/{queue}"
    try:
        first = eventually(lambda: active(stack, path), "the ClusterQueue is Active")
        assert (first["status"], first["observedGeneration"]) == ("True", 1)
        resources[0]["nominalQuota"] = 10
        patch = {"spec": {"resourceGroups": [group]}}
        code, changed = send(stack, "PATCH", path, patch, "application/merge-patch+json")
        assert code == 200 and changed["metadata"]["generation"] == 2
        second = eventually(lambda: active(stack, path), "Active observes generation 2")
        assert (second["status"], second["observedGeneration"]) == ("True", 2)
    finally:
        code, deleted = send(stack, "DELETE", path)
        code_rf, deleted_rf = send(stack, "DELETE", f"{KUEUE}/resourceflavors/{flavor}")
    assert code == 200 and deleted["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
    assert code_rf == 200 and deleted_rf["kind"] == "ResourceFlavor"
    eventually(lambda: gone(stack, path), "the ClusterQueue is gone")
    eventually(lambda: gone(stack, f"{KUEUE}/resourceflavors/{flavor}"), "the flavor is gone")


def _kind(kind: str) -> JSON:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind}


def _ray_spec() -> JSON:
    ports = [
        {"containerPort": 6379, "name": "gcs"},
        {"containerPort": 8265, "name": "dashboard"},
        {"containerPort": 10001, "name": "client"},
    ]
    head = {"name": "ray-head", "image": "rayproject/ray:2.40.0", "ports": ports}
    worker = {"name": "ray-worker", "image": "rayproject/ray:2.40.0"}
    return {
        "rayVersion": "2.40.0",
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [head]}}},
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
    }


def test_kuberay_makes_the_head_service(stack: Any, ns: str) -> None:
    body = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rc"}}
    code, made = send(
        stack, "POST", f"{RAY}/namespaces/{ns}/rayclusters", {**body, "spec": _ray_spec()}
    )
    assert code == 201
    path = f"/api/v1/namespaces/{ns}/services/rc-head-svc"
    service = eventually(
        lambda: (lambda a: a[1] if a[0] == 200 else None)(send(stack, "GET", path)),
        "the head Service exists",
    )
    spec = service["spec"]
    assert (spec["clusterIP"], spec["publishNotReadyAddresses"]) == ("None", True)
    assert [(p["name"], p["port"], p["appProtocol"], p["protocol"]) for p in spec["ports"]] == [
        ("client", 10001, "tcp", "TCP"),
        ("dashboard", 8265, "tcp", "TCP"),
        ("gcs", 6379, "tcp", "TCP"),
        ("metrics", 8080, "tcp", "TCP"),
    ]
    assert (
        spec["selector"]
        == service["metadata"]["labels"]
        == {
            "app.kubernetes.io/created-by": "kuberay-operator",
            "app.kubernetes.io/name": "kuberay",
            "ray.io/cluster": "rc",
            "ray.io/identifier": "rc-head",
            "ray.io/node-type": "head",
        }
    )
    (owner,) = service["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "RayCluster",
        made["metadata"]["uid"],
        True,
    )
    assert [m["manager"] for m in service["metadata"]["managedFields"]] == ["kuberay-operator"]


def test_kuberay_holds_a_deleted_rayjob_with_its_finalizer(stack: Any, ns: str) -> None:
    """A second delete while KubeRay stops the job answers the terminating job, not 404."""
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "rj"},
        "spec": {"entrypoint": "python -c 'print(1)'", "rayClusterSpec": _ray_spec()},
    }
    code, _ = send(stack, "POST", f"{RAY}/namespaces/{ns}/rayjobs", job)
    assert code == 201
    path = f"{RAY}/namespaces/{ns}/rayjobs/rj"
    eventually(
        lambda: send(stack, "GET", path)[1]["metadata"].get("finalizers"),
        "KubeRay's finalizer is on",
    )
    assert send(stack, "GET", path)[1]["metadata"]["finalizers"] == ["ray.io/rayjob-finalizer"]
    first, second = send(stack, "DELETE", path), send(stack, "DELETE", path)
    assert (first[0], first[1]["kind"]) == (200, "RayJob")
    assert first[1]["metadata"]["deletionTimestamp"]
    assert (second[0], second[1]["kind"]) == (200, "RayJob")
    eventually(lambda: gone(stack, path), "the RayJob is gone")
