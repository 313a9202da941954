"""Pod updates kube-apiserver refuses, on FakeCluster and on the real control plane."""

from __future__ import annotations

from typing import Any

from agreement_support import send


def test_an_update_that_drops_a_container_is_refused_at_spec_containers(
    api_server: Any, api_namespace: str
) -> None:
    """ValidatePodUpdate checks the number of containers first, and says only that."""
    containers = [
        {"name": "main", "image": "busybox:1.36"},
        {"name": "side", "image": "busybox:1.36"},
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": containers},
    }
    path = f"/api/v1/namespaces/{api_namespace}/pods"
    assert send(api_server, "POST", path, pod).status == 201
    patch = {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}}
    answer = send(api_server, "PATCH", f"{path}/p", patch, "application/merge-patch+json")
    assert (answer.status, answer.body["reason"]) == (422, "Invalid")
    causes = [(c["reason"], c["field"]) for c in answer.body["details"]["causes"]]
    assert causes == [("FieldValueForbidden", "spec.containers")]
    assert "pod updates may not add or remove containers" in answer.body["message"]
