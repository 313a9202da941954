"""Shared pieces of the RayJob facade tests: clusters with simulated operators, a stand-in for
KubeRay's submitter pods, namespaces, queues and small configurations.

KubeRay runs ``ray job submit`` in a Kubernetes Job named after the RayJob; the Job's pods
carry ``job-name=<RayJob>`` and print the Ray job's output. `SubmitterPods` plays that part
on FakeCluster: it starts a pod when a RayJob is Running, writes lines as the submitter
would, and ends the pod when the job ends.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from flarekit import Client, from_kubeconfig
from flarekit.cluster import ClusterConfiguration
from flarekit.testing import Event, FakeCluster

JSON = dict[str, Any]
TICK = 0.02
RAYJOBS = "rayjobs.ray.io"
SUBMITTER = "ray-job-submitter"

_names = itertools.count()


class SubmitterPods:
    """A simulated submitter pod per running RayJob, with the submitter's output as its log."""

    def __init__(self) -> None:
        self.started: dict[tuple[str, str], str] = {}  # (namespace, job) -> pod

    def on_event(self, cluster: FakeCluster, event: Event) -> None:
        pass

    def on_tick(self, cluster: FakeCluster) -> None:
        for job in cluster.objects(RAYJOBS):
            meta, status = job["metadata"], job.get("status") or {}
            key = (meta["namespace"], meta["name"])
            state = status.get("jobDeploymentStatus")
            pod = self.started.get(key)
            if state == "Running" and status.get("jobStatus") == "RUNNING" and pod is None:
                self._start(cluster, job)
            elif state in ("Complete", "Failed") and pod is not None:
                self._finish(cluster, job, pod)

    def _start(self, cluster: FakeCluster, job: JSON) -> None:
        meta, status = job["metadata"], job["status"]
        ns, name = meta["namespace"], meta["name"]
        pod = f"{name}-{meta['uid'][:5]}"
        labels = {"job-name": name, "batch.kubernetes.io/job-name": name}
        cluster.add_pod(ns, pod, labels=labels, containers=[SUBMITTER], phase="Running")
        cluster.append_log(
            ns, pod, f"Job submission server address: http://{status['dashboardURL']}"
        )
        cluster.append_log(ns, pod, f"Job '{status['jobId']}' submitted successfully")
        cluster.append_log(ns, pod, f"hello from {name}")
        self.started[(ns, name)] = pod

    def _finish(self, cluster: FakeCluster, job: JSON, pod: str) -> None:
        meta, status = job["metadata"], job["status"]
        ns = meta["namespace"]
        current = cluster.get("pods", pod, ns)
        if current is None or (current.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        ok = status["jobDeploymentStatus"] == "Complete"
        ending = "succeeded" if ok else f"failed: {status.get('message')}"
        cluster.append_log(ns, pod, f"Job '{status.get('jobId')}' {ending}")
        cluster.finish_pod(ns, pod, "Succeeded" if ok else "Failed")


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


def deployment_status(fc: FakeCluster, ns: str, name: str) -> str | None:
    obj = fc.get(RAYJOBS, name, ns)
    return None if obj is None else (obj.get("status") or {}).get("jobDeploymentStatus")


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
