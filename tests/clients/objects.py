"""The objects the differential script writes, chosen for the parts servers get wrong.

- Pods and RayClusters have container ports without `protocol`: a list-map key the server
  defaults (`TCP`), which server-side apply must default before it merges.
- RayClusters have worker groups: an atomic list the CRD defaults into (`numOfHosts`), so a
  second manager's identical apply conflicts on it.
- Kueue's ClusterQueue says `nominalQuota: 9`, which Kueue's webhook stores as `"9"`; Kueue's
  webhooks put their finalizer on ClusterQueues and ResourceFlavors.
- The script's pods name a scheduler that does not exist, so that they stay unscheduled on
  both backends: what is compared is the API's answer, not whether a node runs them.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
LABELS = {"diff": "yes"}
#: No scheduler answers to this name: the script's pods stay Pending and unbound everywhere.
HELD = "differential-unscheduled"
RAY_IMAGE = "rayproject/ray:2.40.0"


def configmap(ns: str, name: str, data: JSON, labels: JSON | None = None) -> JSON:
    meta: JSON = {"name": name, "namespace": ns, "labels": labels or dict(LABELS)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def pod(ns: str, name: str, image: str = "busybox:1.36") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": dict(LABELS)},
        "spec": {
            "schedulerName": HELD,
            "containers": [
                {
                    "name": "main",
                    "image": image,
                    "command": ["sleep", "3600"],
                    "ports": [{"containerPort": 8080, "name": "http"}],
                },
                {"name": "side", "image": "busybox:1.36", "command": ["sleep", "3600"]},
            ],
        },
    }


def raycluster(ns: str, name: str, labels: JSON | None = None) -> JSON:
    """A head without ports (the plain case)."""
    container = {
        "name": "ray-head",
        "image": RAY_IMAGE,
        "resources": {"limits": {"cpu": "1", "memory": "2Gi"}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns, "labels": labels or dict(LABELS)},
        "spec": {
            "rayVersion": "2.40.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            },
        },
    }


def _ray_container(name: str, ports: list[JSON]) -> JSON:
    out: JSON = {
        "name": name,
        "image": RAY_IMAGE,
        "resources": {
            "requests": {"cpu": "1", "memory": "2Gi"},
            "limits": {"cpu": "1", "memory": "2Gi"},
        },
    }
    if ports:
        out["ports"] = ports
    return out


def raycluster_with_ports(ns: str, name: str, labels: JSON | None = None) -> JSON:
    """A RayCluster as codeflare-sdk renders one: head ports without `protocol`, one worker
    group."""
    ports = [
        {"containerPort": 6379, "name": "gcs"},
        {"containerPort": 8265, "name": "dashboard"},
        {"containerPort": 10001, "name": "client"},
    ]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns, "labels": labels or dict(LABELS)},
        "spec": {
            "rayVersion": "2.40.0",
            "headGroupSpec": {
                "rayStartParams": {"dashboard-host": "0.0.0.0"},
                "template": {"spec": {"containers": [_ray_container("ray-head", ports)]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [_ray_container("ray-worker", [])]}},
                }
            ],
        },
    }


def rayjob(ns: str, name: str) -> JSON:
    cluster = raycluster_with_ports(ns, name)["spec"]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": ns, "labels": dict(LABELS)},
        "spec": {
            "entrypoint": "python -c 'print(1)'",
            "shutdownAfterJobFinishes": False,
            "rayClusterSpec": cluster,
        },
    }


def trainjob(ns: str, name: str, runtime: str) -> JSON:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": ns, "labels": dict(LABELS)},
        "spec": {
            "runtimeRef": {"name": runtime},
            "trainer": {"numNodes": 1, "command": ["python", "-c", "print(1)"]},
        },
    }


KUEUE = "kueue.x-k8s.io/v1beta2"


def resource_flavor(name: str) -> JSON:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}}


def cluster_queue(name: str, flavor: str, cpu: Any = 9) -> JSON:
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": flavor,
                            "resources": [
                                {"name": "cpu", "nominalQuota": cpu},
                                {"name": "memory", "nominalQuota": "36Gi"},
                            ],
                        }
                    ],
                }
            ],
        },
    }


def local_queue(ns: str, name: str, cluster_queue_name: str) -> JSON:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cluster_queue_name},
    }
