"""Shared pieces of the RayJob facade tests: namespaces, queues, small configurations, and
waiting for a condition (never a bare sleep)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from flarekit import Client, from_kubeconfig
from flarekit.cluster import ClusterConfiguration
from flarekit.testing import FakeCluster

JSON = dict[str, Any]
TICK = 0.02
RAYJOBS = "rayjobs.ray.io"

_names = itertools.count()


def client_for(fc: FakeCluster) -> Client:
    return Client(from_kubeconfig(fc.kubeconfig_path))


def new_namespace(fc: FakeCluster) -> str:
    name = f"rj{next(_names)}"
    fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def small_config(**overrides: Any) -> ClusterConfiguration:
    kwargs: JSON = {
        "num_workers": 1,
        "head_cpu_requests": 1,
        "head_cpu_limits": 1,
        "head_memory_requests": "2Gi",
        "head_memory_limits": "2Gi",
        "worker_memory_requests": "1Gi",
        "worker_memory_limits": "1Gi",
    }
    kwargs.update(overrides)
    return ClusterConfiguration("ignored", **kwargs)


def existing_cluster(fc: FakeCluster, ns: str, name: str, *, suspend: bool = False) -> None:
    """A RayCluster `name` in `ns`, made outside the job (suspended: it never becomes ready,
    so a job on it never starts)."""
    from flarekit.cluster import render_raycluster

    obj = render_raycluster(small_config()).to_dict()
    obj["metadata"] = {"name": name, "namespace": ns}
    if suspend:
        obj["spec"]["suspend"] = True
    fc.create(obj)


def writes(fc: FakeCluster) -> int:
    """Requests that could change something (anything but GET)."""
    return sum(1 for r in fc.requests if r.method != "GET")


def wait_for(check: Callable[[], Any], what: str, timeout: float = 5.0) -> Any:
    """The first truthy `check()`; fails naming `what` after `timeout` (never a bare sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(TICK / 2)
    raise AssertionError(f"timed out waiting until {what}")


def stored(fc: FakeCluster, ns: str, name: str) -> JSON:
    """The RayJob as the server holds it (it must exist)."""
    obj = fc.get(RAYJOBS, name, ns)
    assert obj is not None, f"no RayJob {ns}/{name}"
    return obj


def deployment_status(fc: FakeCluster, ns: str, name: str) -> str | None:
    obj = fc.get(RAYJOBS, name, ns)
    return None if obj is None else (obj.get("status") or {}).get("jobDeploymentStatus")


def submitter_pods(fc: FakeCluster, ns: str, job: str) -> list[JSON]:
    return [
        p
        for p in fc.objects("pods", ns)
        if (p["metadata"].get("labels") or {}).get("job-name") == job
    ]


def seed_queues(fc: FakeCluster, namespace: str, local_queue: str = "lq") -> None:
    """A ResourceFlavor, a ClusterQueue covering cpu and memory, and a LocalQueue in
    `namespace` pointing to it (cluster-scoped objects are made once)."""
    api = "kueue.x-k8s.io/" + fc.resource("clusterqueues").storage_version
    if fc.get("resourceflavors", "flavor") is None:
        fc.create({"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "flavor"}})
    if fc.get("clusterqueues", "cq") is None:
        resources = ["cpu", "memory"]
        quota = [{"name": r, "nominalQuota": "1000"} for r in resources]
        fc.create(
            {
                "apiVersion": api,
                "kind": "ClusterQueue",
                "metadata": {"name": "cq"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": resources,
                            "flavors": [{"name": "flavor", "resources": quota}],
                        }
                    ],
                },
            }
        )
    fc.create(
        {
            "apiVersion": api,
            "kind": "LocalQueue",
            "metadata": {"name": local_queue, "namespace": namespace},
            "spec": {"clusterQueue": "cq"},
        }
    )
