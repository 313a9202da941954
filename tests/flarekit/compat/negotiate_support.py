"""Helpers shared by the negotiation and field-availability tests."""

from __future__ import annotations

from typing import Any

from flarekit import Client, from_kubeconfig
from flarekit_testing import FakeCluster


def client_of(fc: FakeCluster, token: str | None = None) -> Client:
    """A flarekit client of `fc` (as another user when `token` is given)."""
    client = Client(from_kubeconfig(fc.kubeconfig_path), namespace="default")
    if token is not None:
        client.api_client.configuration.api_key = {"authorization": f"Bearer {token}"}
        client.api_client.configuration.refresh_api_key_hook = None
    return client


def writes(fc: FakeCluster) -> int:
    """Requests that could have changed something."""
    return sum(1 for r in fc.requests if r.method != "GET")


def creates(fc: FakeCluster, plural: str) -> int:
    """POSTs that reached the collection `plural`, whatever the answer."""
    return sum(1 for r in fc.requests if r.method == "POST" and r.path.endswith("/" + plural))


def torch_runtime() -> dict[str, Any]:
    """A ClusterTrainingRuntime with the torch policy and one `node` job of one container."""
    pod = {"spec": {"containers": [{"name": "node", "image": "example.com/torch:1"}]}}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {
            "name": "torch-distributed",
            "labels": {"trainer.kubeflow.org/framework": "torch"},
        },
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [{"name": "node", "template": {"spec": {"template": pod}}}]
                }
            },
        },
    }
