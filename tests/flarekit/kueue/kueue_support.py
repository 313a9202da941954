"""Shared pieces of the Kueue tests: the old and new Kueue releases they run on, and queue
objects seeded directly into the emulator in the older API version both serve."""

from __future__ import annotations

from typing import Any

from flarekit_testing import FakeCluster

#: Kueue v0.10.6 serves only v1beta1; v0.19.2 serves v1beta2 and the deprecated v1beta1.
KUEUE_RELEASES = ("v0.10.6", "v0.19.2")
GROUP = "kueue.x-k8s.io"


def seed_local_queue(
    fc: FakeCluster,
    namespace: str,
    name: str,
    cluster_queue: str = "cq",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return fc.create(
        {
            "apiVersion": f"{GROUP}/v1beta1",
            "kind": "LocalQueue",
            "metadata": meta,
            "spec": {"clusterQueue": cluster_queue},
        }
    )


def raycluster_body(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    """A small RayCluster asking for 1 CPU and 1Gi on its head."""
    container = {
        "name": "ray-head",
        "image": "rayproject/ray:2.41.0",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            }
        },
    }
