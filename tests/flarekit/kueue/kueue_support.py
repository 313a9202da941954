"""Shared pieces of the Kueue tests: FakeClusters serving old and new Kueue releases,
clients, namespaces, and queue objects seeded directly into the emulator."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any, TypeVar

from flarekit import Client, from_kubeconfig
from flarekit.testing import FakeCluster

#: Kueue v0.10.6 serves only v1beta1; v0.19.2 serves v1beta2 and the deprecated v1beta1.
KUEUE_RELEASES = ("v0.10.6", "v0.19.2")
GROUP = "kueue.x-k8s.io"
T = TypeVar("T")

_names = itertools.count()


def client_for(fc: FakeCluster) -> Client:
    return Client(from_kubeconfig(fc.kubeconfig_path))


def new_namespace(fc: FakeCluster) -> str:
    name = f"kq{next(_names)}"
    fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


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


def writes(fc: FakeCluster) -> int:
    """Requests that could change something (anything but GET)."""
    return sum(1 for r in fc.requests if r.method != "GET")


def wait_until(check: Callable[[], T | None], what: str, timeout: float = 5.0) -> T:
    """The first truthy `check()` result; fails naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.01)


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
