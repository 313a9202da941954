"""Shared pieces of the RayJob facade tests: small configurations, clusters made outside the
job, and reading the RayJob and its submitter back from the server."""

from __future__ import annotations

from typing import Any

from flarekit.cluster import ClusterConfiguration
from flarekit_testing import FakeCluster

JSON = dict[str, Any]
TICK = 0.02
RAYJOBS = "rayjobs.ray.io"


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
