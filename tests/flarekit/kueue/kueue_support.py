"""Shared pieces of the Kueue tests: FakeClusters serving old and new Kueue releases,
clients, namespaces, and queue objects seeded directly into the emulator."""

from __future__ import annotations

import itertools
from typing import Any

from flarekit import Client, from_kubeconfig
from flarekit.testing import FakeCluster

#: Kueue v0.10.6 serves only v1beta1; v0.19.2 serves v1beta2 and the deprecated v1beta1.
KUEUE_RELEASES = ("v0.10.6", "v0.19.2")
GROUP = "kueue.x-k8s.io"

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
