"""The pod sets a job asks for, as Kueue derives them for its Workload.

Kueue admits a job by its pod sets: a name, a pod count and a pod template per group of
identical pods. RayClusters have the head and one set per worker group; RayJobs add the
submitter pod (K8sJobMode, the default); TrainJobs have their runtime's replicated jobs (or
one `node` set of `numNodes` pods when the runtime is not there to read); AppWrappers have the
pod sets each component declares, or those of a wrapped RayCluster / RayJob when it declares
none; PyTorchJobs one set per replica type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flarekit_testing.operators._raycluster import pod_sets as ray_pod_sets

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

JSON = dict[str, Any]
PodSet = tuple[str, int, JSON]  # name, count, pod template

#: What KubeRay gives the submitter pod when the job does not say (its default requests).
_SUBMITTER_REQUESTS = {"cpu": "500m", "memory": "200Mi"}


def _submitter(spec: Mapping[str, Any]) -> PodSet:
    template = spec.get("submitterPodTemplate")
    if template:
        return ("submitter", 1, dict(template))
    head = ((spec.get("rayClusterSpec") or {}).get("headGroupSpec") or {}).get("template") or {}
    containers = (head.get("spec") or {}).get("containers") or [{}]
    container: JSON = {
        "name": "ray-job-submitter",
        "resources": {"requests": dict(_SUBMITTER_REQUESTS)},
    }
    if containers[0].get("image"):
        container["image"] = containers[0]["image"]
    return ("submitter", 1, {"spec": {"containers": [container], "restartPolicy": "Never"}})


def rayjob(spec: Mapping[str, Any]) -> list[PodSet]:
    sets = ray_pod_sets(spec.get("rayClusterSpec") or {}) if spec.get("rayClusterSpec") else []
    if (spec.get("submissionMode") or "K8sJobMode") == "K8sJobMode":
        sets.append(_submitter(spec))
    return sets


def runtime_of(cluster: FakeCluster, obj: Mapping[str, Any]) -> JSON | None:
    ref = (obj.get("spec") or {}).get("runtimeRef") or {}
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    resource = (
        "trainingruntimes.trainer.kubeflow.org"
        if kind == "TrainingRuntime"
        else "clustertrainingruntimes.trainer.kubeflow.org"
    )
    try:
        return cluster.get(resource, str(ref.get("name", "")), obj["metadata"].get("namespace"))
    except ValueError:  # the runtime kinds are not served
        return None


def trainjob(cluster: FakeCluster, obj: Mapping[str, Any]) -> list[PodSet]:
    trainer = (obj.get("spec") or {}).get("trainer") or {}
    runtime = runtime_of(cluster, obj)
    jobs = ((((runtime or {}).get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "replicatedJobs"
    ) or []
    sets: list[PodSet] = []
    for job in jobs:
        job_spec = (job.get("template") or {}).get("spec") or {}
        template = dict(job_spec.get("template") or {})
        count = int(job.get("replicas") or 1) * int(job_spec.get("parallelism") or 1)
        if job.get("name") == "node" and trainer.get("numNodes"):
            count = int(trainer["numNodes"])
        sets.append((str(job.get("name")), count, template))
    if sets:
        return sets
    container: JSON = {"name": "node", "resources": dict(trainer.get("resourcesPerNode") or {})}
    if trainer.get("image"):
        container["image"] = trainer["image"]
    return [("node", int(trainer.get("numNodes") or 1), {"spec": {"containers": [container]}})]


def _at(doc: Any, path: str) -> Any:
    for part in [p for p in path.split(".") if p]:
        if isinstance(doc, list) and part.isdigit():
            doc = doc[int(part)] if int(part) < len(doc) else None
        elif isinstance(doc, dict):
            doc = doc.get(part)
        else:
            return None
    return doc


def component_pod_sets(component: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(path, replicas) of each pod set of one AppWrapper component."""
    declared = component.get("podSets") or []
    if declared:
        return [(str(p.get("path", "")), int(p.get("replicas") or 1)) for p in declared]
    template = component.get("template") or {}
    kind = template.get("kind")
    if kind == "RayCluster":
        spec = template.get("spec") or {}
        out = [("template.spec.headGroupSpec.template", 1)]
        for i, (_, count, _) in enumerate(ray_pod_sets(spec)[1:]):
            out.append((f"template.spec.workerGroupSpecs.{i}.template", count))
        return out
    if kind == "RayJob":
        return [
            (f"template.spec.rayClusterSpec.{path[len('template.spec.'):]}", count)
            for path, count in component_pod_sets(
                {
                    "template": {
                        "kind": "RayCluster",
                        "spec": (template.get("spec") or {}).get("rayClusterSpec") or {},
                    }
                }
            )
        ]
    return []


def appwrapper(obj: Mapping[str, Any]) -> list[PodSet]:
    name = str(obj["metadata"]["name"])
    sets: list[PodSet] = []
    for component in (obj.get("spec") or {}).get("components") or []:
        for path, count in component_pod_sets(component):
            template = _at(component, path)
            set_name = f"{name[:50]}-{len(sets)}"
            sets.append((set_name, count, dict(template) if isinstance(template, dict) else {}))
    return sets


def pytorchjob(spec: Mapping[str, Any]) -> list[PodSet]:
    """One pod set per replica type (Master first), named as Kueue names them (lower case)."""
    replicas = spec.get("pytorchReplicaSpecs") or {}
    order = sorted(replicas, key=lambda role: (role != "Master", role != "Worker", role))
    return [
        (role.lower(), int(replicas[role].get("replicas", 1) or 0),
         dict(replicas[role].get("template") or {}))
        for role in order
    ]  # fmt: skip


def for_job(cluster: FakeCluster, kind: str, obj: Mapping[str, Any]) -> list[PodSet]:
    spec = obj.get("spec") or {}
    if kind == "RayCluster":
        return ray_pod_sets(spec)
    if kind == "RayJob":
        return rayjob(spec)
    if kind == "TrainJob":
        return trainjob(cluster, obj)
    if kind == "AppWrapper":
        return appwrapper(obj)
    if kind == "PyTorchJob":
        return pytorchjob(spec)
    raise ValueError(f"no pod sets known for kind {kind!r}")
