"""Helpers for the simulated-controller tests: small job objects, waiting for an object's
state, and validation.

Waiting is always for a condition with a timeout (never a bare sleep); the controller thread
ticks every 20 ms in these tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from flarekit_models import resource_model
from flarekit_testing import FakeCluster

JSON = dict[str, Any]
TICK = 0.02


def wait_for(
    fc: FakeCluster,
    resource: str,
    name: str,
    check: Callable[[JSON], bool],
    namespace: str | None = None,
    timeout: float = 30.0,
) -> JSON:
    """The object once `check(obj)` holds; fails with the last state seen after `timeout`
    (generous: it only matters when the state never comes, and a loaded CI machine runs
    the simulated controllers' threads late)."""
    deadline = time.monotonic() + timeout
    last: JSON | None = None
    while time.monotonic() < deadline:
        last = fc.get(resource, name, namespace)
        if last is not None and check(last):
            return last
        time.sleep(TICK / 2)
    raise AssertionError(f"{resource}/{name} did not reach the expected state: {last}")


def status(obj: JSON) -> JSON:
    found: JSON = obj.get("status") or {}
    return found


def cond(obj: JSON, type_: str) -> JSON | None:
    found: JSON | None = next(
        (c for c in status(obj).get("conditions") or [] if c["type"] == type_), None
    )
    return found


def validate(obj: JSON) -> None:
    """The typed model parses the object (status included)."""
    resource_model(obj["apiVersion"], obj["kind"]).model_validate(obj)


def no_errors(fc: FakeCluster) -> None:
    assert fc.controller_errors == [], fc.controller_errors


def pod_template(container: str, image: str = "rayproject/ray:2.41.0", **resources: Any) -> JSON:
    body: JSON = {"name": container, "image": image}
    if resources:
        body["resources"] = resources
    return {"spec": {"containers": [body]}}


def ray_cluster_spec(workers: int = 2) -> JSON:
    return {
        "headGroupSpec": {
            "rayStartParams": {},
            "template": pod_template("ray-head", requests={"cpu": "1", "memory": "2Gi"}),
        },
        "workerGroupSpecs": [
            {
                "groupName": "gpu",
                "replicas": workers,
                "minReplicas": 0,
                "maxReplicas": 4,
                "rayStartParams": {},
                "template": pod_template(
                    "ray-worker", limits={"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1}
                ),
            }
        ],
    }


def ray_cluster(name: str, labels: JSON | None = None, **spec: Any) -> JSON:
    meta: JSON = {"name": name}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": meta,
        "spec": {**ray_cluster_spec(), **spec},
    }


def ray_job(name: str, labels: JSON | None = None, **spec: Any) -> JSON:
    meta: JSON = {"name": name}
    if labels:
        meta["labels"] = labels
    body: JSON = {"entrypoint": "python -c 'print(1)'", "rayClusterSpec": ray_cluster_spec(1)}
    body.update(spec)
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta, "spec": body}


def train_job(name: str, labels: JSON | None = None, **spec: Any) -> JSON:
    meta: JSON = {"name": name}
    if labels:
        meta["labels"] = labels
    body: JSON = {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {
            "numNodes": 2,
            "image": "pytorch/pytorch:2.5.0",
            "resourcesPerNode": {"requests": {"cpu": "2", "memory": "4Gi"}},
        },
    }
    body.update(spec)
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": meta,
        "spec": body,
    }


def app_wrapper(name: str, labels: JSON | None = None, **spec: Any) -> JSON:
    meta: JSON = {"name": name}
    if labels:
        meta["labels"] = labels
    wrapped = ray_cluster(f"{name}-ray")
    body: JSON = {"components": [{"template": wrapped}]}
    body.update(spec)
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": meta,
        "spec": body,
    }
