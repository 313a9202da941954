"""What the operators do to the objects around a job, the same on the simulated operators and
the real ones: Kueue's finalizers on ClusterQueues and ResourceFlavors, its conditions'
`observedGeneration`, KubeRay's head Service, its finalizer on RayJobs and the order in which
a RayCluster's head and the whole cluster are reported ready, and the `PET_*` variables
Kubeflow Trainer gives a trainer pod."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from e2e_support import RUNTIME, Backend

from flarekit import Client
from flarekit.job import TrainJob
from flarekit_testing import ApiError
from kube_support import QUEUE_LABEL

JSON = dict[str, Any]
KUEUE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
RAYJOB_FINALIZER = "ray.io/rayjob-finalizer"


def _head_only(name: str, namespace: str, workers: int = 0) -> JSON:
    pod = {
        "containers": [
            {
                "name": "ray-head",
                "image": "rayproject/ray:2.9.0",
                "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}},
            }
        ]
    }
    spec: JSON = {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": pod}}}
    if workers:
        worker_pod = {"containers": [{**pod["containers"][0], "name": "ray-worker"}]}
        spec["workerGroupSpecs"] = [
            {"groupName": "w", "replicas": workers, "minReplicas": workers,
             "maxReplicas": workers, "rayStartParams": {}, "template": {"spec": worker_pod}}
        ]  # fmt: skip
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


@pytest.fixture
def flavor_and_queue(backend: Backend, namespace: str) -> Iterator[tuple[str, str]]:
    api = backend.kueue_api()
    flavor, queue = f"{namespace}-f", f"{namespace}-cq"
    backend.cluster.create(
        {"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": flavor}}
    )
    group = {
        "coveredResources": ["cpu"],
        "flavors": [{"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
    }
    backend.cluster.create(
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": queue},
            "spec": {"namespaceSelector": {}, "resourceGroups": [group]},
        }
    )
    yield flavor, queue
    for resource, name in (("clusterqueues", queue), ("resourceflavors", flavor)):
        try:
            backend.cluster.delete(resource, name)
        except ApiError as exc:
            if exc.code != 404:
                raise
    for resource, name in (("clusterqueues", queue), ("resourceflavors", flavor)):
        backend.wait(lambda r=resource, n=name: backend.get(r, n) is None, f"{name} gone")


def _finalized(backend: Backend, resource: str, name: str) -> JSON:
    def found() -> JSON | None:
        obj = backend.get(resource, name)
        return obj if obj and KUEUE_FINALIZER in obj["metadata"].get("finalizers", []) else None

    obj: JSON = backend.wait(found, f"Kueue's finalizer on {name}")
    return obj


def test_kueue_finalizers_hold_deleted_queues_and_flavors_until_unused(
    backend: Backend, flavor_and_queue: tuple[str, str]
) -> None:
    flavor, queue = flavor_and_queue
    _finalized(backend, "clusterqueues", queue)
    _finalized(backend, "resourceflavors", flavor)
    seen: list[tuple[str, JSON]] = []
    stop = threading.Event()
    rv = str((backend.get("resourceflavors", flavor) or {})["metadata"]["resourceVersion"])

    def watch() -> None:
        from kubernetes import watch as k8s_watch

        api = backend.cluster.api_client()
        from kubernetes.client import CustomObjectsApi

        group, version = backend.kueue_api().split("/")
        stream = k8s_watch.Watch().stream(
            CustomObjectsApi(api).list_cluster_custom_object, group, version, "resourceflavors",
            resource_version=rv, field_selector=f"metadata.name={flavor}", timeout_seconds=30,
        )  # fmt: skip
        for event in stream:
            seen.append((event["type"], event["object"]))
            if event["type"] == "DELETED" or stop.is_set():
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    # The flavor is still named by the queue: deleting it answers with the object,
    # terminating, and it stays.
    answer = backend.cluster.delete("resourceflavors", flavor)
    assert answer.get("kind") == "ResourceFlavor", answer
    assert answer["metadata"].get("deletionTimestamp")
    assert KUEUE_FINALIZER in answer["metadata"]["finalizers"]
    backend.wait(lambda: any(t == "MODIFIED" for t, _ in seen), "the watch's MODIFIED event")
    assert backend.get("resourceflavors", flavor) is not None
    # Once the queue is gone the flavor is no longer used, and goes too.
    queue_answer = backend.cluster.delete("clusterqueues", queue)
    assert queue_answer.get("kind") == "ClusterQueue"
    backend.wait(lambda: backend.get("clusterqueues", queue) is None, "the ClusterQueue gone")
    backend.wait(lambda: backend.get("resourceflavors", flavor) is None, "the flavor gone")
    watcher.join(timeout=30)
    stop.set()
    types = [t for t, _ in seen]
    assert types[-1] == "DELETED" and "MODIFIED" in types, types


def test_kueue_conditions_follow_the_generation(
    backend: Backend, flavor_and_queue: tuple[str, str]
) -> None:
    _, queue = flavor_and_queue

    def active_of(generation: int) -> JSON | None:
        obj = backend.get("clusterqueues", queue) or {}
        for c in (obj.get("status") or {}).get("conditions") or []:
            if c.get("type") == "Active" and c.get("observedGeneration") == generation:
                return dict(c)
        return None

    first = backend.wait(lambda: active_of(1), "Active for generation 1")
    assert first["status"] == "True"
    current = backend.get("clusterqueues", queue) or {}
    spec = current["spec"]
    spec["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "5"
    backend.cluster.patch(
        "clusterqueues", queue, {"spec": {"resourceGroups": spec["resourceGroups"]}}
    )
    assert (backend.get("clusterqueues", queue) or {})["metadata"]["generation"] == 2
    second = backend.wait(lambda: active_of(2), "Active for generation 2")
    assert (second["status"], second["reason"]) == ("True", "Ready")


def test_kuberay_makes_the_head_service(backend: Backend, namespace: str) -> None:
    backend.cluster.create(_head_only("svc", namespace))
    service = backend.wait(
        lambda: backend.get("services", "svc-head-svc", namespace), "the head Service"
    )
    cluster = backend.get("rayclusters", "svc", namespace) or {}
    spec = service["spec"]
    assert spec["clusterIP"] == "None" and spec["publishNotReadyAddresses"] is True
    assert spec["type"] == "ClusterIP"
    assert [(p["name"], p["port"], p.get("appProtocol"), p["protocol"], p["targetPort"])
            for p in spec["ports"]] == [
        ("client", 10001, "tcp", "TCP", 10001),
        ("dashboard", 8265, "tcp", "TCP", 8265),
        ("gcs-server", 6379, "tcp", "TCP", 6379),
        ("metrics", 8080, "tcp", "TCP", 8080),
        ("serve", 8000, "tcp", "TCP", 8000),
    ]  # fmt: skip
    labels = {
        "ray.io/cluster": "svc",
        "ray.io/node-type": "head",
        "ray.io/identifier": "svc-head",
        "app.kubernetes.io/name": "kuberay",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    assert spec["selector"] == labels
    assert service["metadata"]["labels"] == labels
    [owner] = service["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "RayCluster", "svc", cluster["metadata"]["uid"], True,
    )  # fmt: skip

    def ready() -> JSON | None:
        obj = backend.get("rayclusters", "svc", namespace) or {}
        return obj if (obj.get("status") or {}).get("state") == "ready" else None

    status = backend.wait(ready, "the cluster ready")["status"]
    assert status["head"]["serviceName"] == "svc-head-svc"
    assert status["head"]["serviceIP"] == status["head"]["podIP"]  # headless: the pod's IP
    assert status["endpoints"] == {
        "client": "10001", "dashboard": "8265", "gcs-server": "6379", "metrics": "8080",
        "serve": "8000",
    }  # fmt: skip


def test_the_head_is_ready_before_the_cluster(backend: Backend, namespace: str) -> None:
    events: list[JSON] = []
    done = threading.Event()

    def watch() -> None:
        from kubernetes import watch as k8s_watch
        from kubernetes.client import CustomObjectsApi

        api = CustomObjectsApi(backend.cluster.api_client())
        for event in k8s_watch.Watch().stream(
            api.list_namespaced_custom_object, "ray.io", "v1", namespace, "rayclusters",
            timeout_seconds=int(backend.timeout),
        ):  # fmt: skip
            status = event["object"].get("status") or {}
            events.append(status)
            if status.get("state") == "ready":
                done.set()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    backend.wait(lambda: True, "the watch to start", timeout=1)
    backend.cluster.create(_head_only("order", namespace, workers=1))
    assert done.wait(backend.timeout), events

    def head_ready(status: JSON) -> bool:
        return any(
            c.get("type") == "HeadPodReady" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )

    first_head = next(i for i, s in enumerate(events) if head_ready(s))
    first_ready = next(i for i, s in enumerate(events) if s.get("state") == "ready")
    assert first_head < first_ready, events
    assert events[first_head].get("state") != "ready"


def test_kuberay_finalizer_holds_a_deleted_rayjob(backend: Backend, namespace: str) -> None:
    backend.cluster.create(_head_only("host", namespace))
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "held", "namespace": namespace},
        "spec": {
            "entrypoint": "python -c 'import time; time.sleep(600)'",
            "clusterSelector": {"ray.io/cluster": "host"},
            "submissionMode": "HTTPMode",
        },
    }
    backend.cluster.create(job)

    def finalized() -> JSON | None:
        obj = backend.get("rayjobs", "held", namespace)
        return obj if obj and RAYJOB_FINALIZER in obj["metadata"].get("finalizers", []) else None

    backend.wait(finalized, "KubeRay's finalizer on the RayJob")
    answer = backend.cluster.delete("rayjobs", "held", namespace)
    assert answer.get("kind") == "RayJob", answer  # the object, terminating: not a Status
    assert answer["metadata"].get("deletionTimestamp")
    backend.wait(lambda: backend.get("rayjobs", "held", namespace) is None, "the RayJob gone")


def test_trainer_gives_the_trainer_pod_the_torch_variables(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = TrainJob(
        "pet", namespace=namespace, runtime=RUNTIME, image="pytorch/pytorch:2.7.1",
        command=["python", "train.py"], num_nodes=2, resources_per_node={"cpu": 1, "memory": "1Gi"},
        local_queue=lq, client=client,
    ).submit()  # fmt: skip

    def trainer_pods() -> list[JSON] | None:
        pods = [
            p
            for p in backend.objects("pods", namespace)
            if (p["metadata"].get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name") == "pet"
            and (p["metadata"].get("labels") or {}).get("jobset.sigs.k8s.io/replicatedjob-name")
            == "node"
        ]
        return pods if len(pods) == 2 else None

    pods = backend.wait(trainer_pods, "the trainer pods")
    container = next(c for c in pods[0]["spec"]["containers"] if c["name"] == "node")
    env = {e["name"]: e for e in container.get("env") or []}
    pet = {name: env[name] for name in env if name.startswith("PET_")}
    assert pet == {
        "PET_NNODES": {"name": "PET_NNODES", "value": "2"},
        "PET_NPROC_PER_NODE": {"name": "PET_NPROC_PER_NODE", "value": "1"},
        "PET_NODE_RANK": {
            "name": "PET_NODE_RANK",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath":
                          "metadata.annotations['batch.kubernetes.io/job-completion-index']"}},
        },
        "PET_MASTER_ADDR": {"name": "PET_MASTER_ADDR", "value": "pet-node-0-0.pet"},
        "PET_MASTER_PORT": {"name": "PET_MASTER_PORT", "value": "29500"},
    }  # fmt: skip
    assert {"containerPort": 29500, "protocol": "TCP"} in container.get("ports", [])
    assert (backend.get("trainjobs", "pet", namespace) or {})["metadata"]["labels"][QUEUE_LABEL]
    job.delete()
