"""The operators' admission webhooks, on FakeCluster with the simulated operators and on the
control plane with the real ones (`stack`, conftest.py): what Kueue and
AppWrapper change or refuse before a write is stored. Creates are dry runs where the answer
is all that matters (webhooks run for them too)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import urllib3

JSON = dict[str, Any]
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
QUEUED = {"kueue.x-k8s.io/queue-name": "lq"}
DRY = "?dryRun=All"


def send(stack: Any, method: str, path: str, body: JSON, content_type: str = "") -> Any:
    pool = urllib3.PoolManager(ca_certs=str(stack.ca_path))
    headers = {
        "Authorization": f"Bearer {stack.token}",
        "Content-Type": content_type or "application/json",
    }
    reply = pool.request(method, stack.url + path, body=json.dumps(body), headers=headers)
    return reply.status, json.loads(reply.data)


def unique(base: str) -> str:
    return f"{base}-{uuid.uuid4().hex[:6]}"


def cluster_queue(name: str) -> JSON:
    resources = [{"name": "cpu", "nominalQuota": 9}, {"name": "memory", "nominalQuota": "1024Mi"}]
    group = {
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": "f", "resources": resources}],
    }
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {"namespaceSelector": {}, "resourceGroups": [group]},
    }


def raycluster(ns: str, labels: JSON | None = None, version: Any = "2.40.0") -> JSON:
    template = {"spec": {"containers": [{"name": "c", "image": "ray:2"}]}}
    worker = {"groupName": "w", "replicas": 1, "rayStartParams": {}, "template": template}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": ns, "labels": labels or {}},
        "spec": {
            "rayVersion": version,
            "headGroupSpec": {"rayStartParams": {}, "template": template},
            "workerGroupSpecs": [worker],
        },
    }


def test_kueue_gives_its_queues_a_finalizer_and_canonical_quotas(stack: Any) -> None:
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor"}
    code, made = send(
        stack,
        "POST",
        f"{KUEUE}/resourceflavors{DRY}",
        {**flavor, "metadata": {"name": unique("rf")}},
    )
    assert code == 201
    assert made["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
    assert made["spec"] == {}
    code, made = send(stack, "POST", f"{KUEUE}/clusterqueues{DRY}", cluster_queue(unique("cq")))
    assert code == 201
    assert made["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
    resources = made["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert [r["nominalQuota"] for r in resources] == ["9", "1Gi"]


def test_a_second_managers_identical_apply_conflicts_on_the_rewritten_quota(stack: Any) -> None:
    """The first apply stored "9" for 9, so the same configuration differs from it."""
    body = cluster_queue(unique("cq"))
    path = f"{KUEUE}/clusterqueues/{body['metadata']['name']}"
    apply = "application/apply-patch+yaml"
    code, _ = send(stack, "PATCH", f"{path}?fieldManager=first", body, apply)
    assert code == 201
    try:
        code, conflict = send(stack, "PATCH", f"{path}?fieldManager=second", body, apply)
        assert code == 409
        causes = [c["field"] for c in conflict["details"]["causes"]]
        assert causes == [".spec.resourceGroups"]
        code, deleted = send(stack, "DELETE", path, {})
        assert code == 200 and deleted["kind"] == "ClusterQueue"  # held by the finalizer
        assert deleted["metadata"]["deletionTimestamp"]
    finally:
        send(stack, "DELETE", path, {})


def test_kueue_suspends_a_queued_job_as_it_is_created(stack: Any, ns: str) -> None:
    path = f"/apis/ray.io/v1/namespaces/{ns}/rayclusters{DRY}"
    code, made = send(stack, "POST", path, raycluster(ns, QUEUED))
    assert code == 201
    assert made["spec"]["suspend"] is True
    assert made["spec"]["headGroupSpec"]["template"]["metadata"] == {}
    (worker,) = made["spec"]["workerGroupSpecs"]
    assert worker["scaleStrategy"] == {} and worker["template"]["metadata"] == {}
    code, plain = send(stack, "POST", path, raycluster(ns))
    assert code == 201
    assert (
        "suspend" not in plain["spec"]
        and "metadata" not in plain["spec"]["headGroupSpec"]["template"]
    )


def test_kueue_reads_a_job_into_its_go_type_first(stack: Any, ns: str) -> None:
    """A field of the wrong type: Kueue's webhook cannot read the object (400, no reason)
    before the schema would have said 422."""
    path = f"/apis/ray.io/v1/namespaces/{ns}/rayclusters{DRY}"
    code, refused = send(stack, "POST", path, raycluster(ns, version=2))
    assert code == 400 and refused.get("reason", "") == ""
    assert "cannot unmarshal number into Go struct field" in refused["message"]


def test_kueue_refuses_a_queued_rayjob_that_keeps_its_cluster(stack: Any, ns: str) -> None:
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "rj", "namespace": ns, "labels": QUEUED},
        "spec": {"entrypoint": "python -c 'print(1)'", "rayClusterSpec": raycluster(ns)["spec"]},
    }
    path = f"/apis/ray.io/v1/namespaces/{ns}/rayjobs{DRY}"
    code, refused = send(stack, "POST", path, job)
    assert (code, refused["reason"]) == (403, "Forbidden")
    assert "should delete the cluster after finishing" in refused["message"]
    job["spec"]["shutdownAfterJobFinishes"] = True
    code, made = send(stack, "POST", path, job)
    assert code == 201 and made["spec"]["suspend"] is True


def test_appwrapper_labels_who_created_it(stack: Any, ns: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1"}]},
    }
    wrapper = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": ns},
        "spec": {"components": [{"template": pod}]},
    }
    path = f"/apis/workload.codeflare.dev/v1beta2/namespaces/{ns}/appwrappers{DRY}"
    code, made = send(stack, "POST", path, wrapper)
    assert code == 201
    labels = made["metadata"]["labels"]
    assert labels["workload.codeflare.dev/user"] == "flarekit-admin"
    assert labels["workload.codeflare.dev/userid"] == "flarekit-admin"
