"""PyTorchJobController: the training operator's conditions, replica statuses and pods, alone
and under the simulated Kueue."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sim_support import JSON, TICK, cond, no_errors, status, validate, wait_for

from flarekit_testing import FakeCluster, KueueController, ManualClock, PyTorchJobController
from kube_support import QUEUE_LABEL, seed_queues
from wait_support import wait_until

PT = "pytorchjobs"
RELEASES = {"training-operator": "v1.9.4", "kueue": "v0.19.2"}


def pytorch_job(name: str, workers: int = 2, labels: JSON | None = None, **run: Any) -> JSON:
    def replica(count: int) -> JSON:
        container = {
            "name": "pytorch",
            "image": "pytorch/pytorch:2.5.1",
            "env": [{"name": "MINE", "value": "1"}],
            "resources": {"requests": {"cpu": "1"}},
        }
        return {"replicas": count, "template": {"spec": {"containers": [container]}}}

    spec: JSON = {"nprocPerNode": "2", "pytorchReplicaSpecs": {"Master": replica(1)}}
    if workers:
        spec["pytorchReplicaSpecs"]["Worker"] = replica(workers)
    if run:
        spec["runPolicy"] = run
    meta: JSON = {"name": name, "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta, "spec": spec}


def _true(type_: str) -> Callable[[JSON], bool]:
    return lambda o: (cond(o, type_) or {}).get("status") == "True"


def pods_of(fc: FakeCluster, job: str) -> dict[str, JSON]:
    return {
        p["metadata"]["name"]: p
        for p in fc.objects("pods", "default")
        if (p["metadata"].get("labels") or {}).get("training.kubeflow.org/job-name") == job
    }


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="module")
def controller(clock: ManualClock) -> PyTorchJobController:
    return PyTorchJobController(
        run_for=10,
        fail_when=lambda o: o["metadata"]["name"].startswith("bad"),
        logs=lambda job, pod: [f"hello from {pod['metadata']['name']}"],
        clock=clock,
    )


@pytest.fixture(scope="module")
def kueue() -> KueueController:
    return KueueController(pending=True)


@pytest.fixture(scope="module")
def fc(controller: PyTorchJobController, kueue: KueueController) -> Iterator[FakeCluster]:
    with FakeCluster(releases=RELEASES, tick_interval=TICK, controllers=[controller, kueue]) as c:
        yield c


def test_runs_with_the_operators_pods_then_succeeds(fc: FakeCluster, clock: ManualClock) -> None:
    fc.create(pytorch_job("ok"))
    running = wait_for(fc, PT, "ok", _true("Running"))
    assert (cond(running, "Created") or {}).get("reason") == "PyTorchJobCreated"
    assert (cond(running, "Running") or {})["message"] == "PyTorchJob default/ok is running."
    replicas = status(running)["replicaStatuses"]
    assert replicas["Master"]["active"] == 1 and replicas["Worker"]["active"] == 2
    assert replicas["Worker"]["selector"] == (
        "training.kubeflow.org/job-name=ok,training.kubeflow.org/operator-name="
        "pytorchjob-controller,training.kubeflow.org/replica-type=worker"
    )
    assert status(running)["startTime"]
    validate(running)

    pods = pods_of(fc, "ok")
    assert sorted(pods) == ["ok-master-0", "ok-worker-0", "ok-worker-1"]
    master, worker = pods["ok-master-0"], pods["ok-worker-1"]
    assert master["metadata"]["labels"] == {
        "training.kubeflow.org/job-name": "ok",
        "training.kubeflow.org/replica-type": "master",
        "training.kubeflow.org/replica-index": "0",
        "training.kubeflow.org/job-role": "master",
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
    }
    assert "training.kubeflow.org/job-role" not in worker["metadata"]["labels"]
    assert worker["metadata"]["labels"]["training.kubeflow.org/replica-index"] == "1"
    [owner] = worker["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("PyTorchJob", "ok", True)
    [container] = worker["spec"]["containers"]
    assert container["name"] == "pytorch"
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["MINE"] == "1"
    # the operator counts WORLD_SIZE as replicas x nprocPerNode
    assert (env["MASTER_ADDR"], env["WORLD_SIZE"], env["RANK"]) == ("ok-master-0", "6", "2")
    assert env["PET_NPROC_PER_NODE"] == "2"
    wait_until(
        lambda: "hello from ok-master-0" in fc.read_log("default", "ok-master-0"), "master log"
    )

    clock.advance(10)
    done = wait_for(fc, PT, "ok", _true("Succeeded"))
    assert (cond(done, "Succeeded") or {})["reason"] == "PyTorchJobSucceeded"
    assert (cond(done, "Running") or {})["status"] == "False"
    assert status(done)["replicaStatuses"]["Worker"]["succeeded"] == 2
    assert status(done)["completionTime"]
    validate(done)
    pods = pods_of(fc, "ok")
    assert {p["status"]["phase"] for p in pods.values()} == {"Succeeded"}
    no_errors(fc)


def test_failure_fails_the_master(fc: FakeCluster, clock: ManualClock) -> None:
    fc.create(pytorch_job("bad", workers=0))
    wait_for(fc, PT, "bad", _true("Running"))
    clock.advance(10)
    failed = wait_for(fc, PT, "bad", _true("Failed"))
    assert (cond(failed, "Failed") or {})["reason"] == "PyTorchJobFailed"
    assert status(failed)["replicaStatuses"]["Master"]["failed"] == 1
    assert "Worker" not in status(failed)["replicaStatuses"]
    assert pods_of(fc, "bad")["bad-master-0"]["status"]["phase"] == "Failed"
    validate(failed)


def test_run_policy_suspend_holds_it_and_resuming_runs_it(
    fc: FakeCluster, controller: PyTorchJobController
) -> None:
    fc.create(pytorch_job("held", suspend=True))
    held = wait_for(fc, PT, "held", _true("Suspended"))
    assert (cond(held, "Suspended") or {})["reason"] == "PyTorchJobSuspended"
    controller.wait_ticks(3)
    assert pods_of(fc, "held") == {}
    fc.patch(PT, "held", {"spec": {"runPolicy": {"suspend": False}}}, "default")
    resumed = wait_for(fc, PT, "held", _true("Running"))
    assert (cond(resumed, "Suspended") or {})["reason"] == "PyTorchJobResumed"
    assert len(pods_of(fc, "held")) == 3
    fc.patch(PT, "held", {"spec": {"runPolicy": {"suspend": True}}}, "default")
    wait_for(fc, PT, "held", _true("Suspended"))
    wait_until(lambda: pods_of(fc, "held") == {}, "pods deleted on suspension")


def test_deleting_the_job_deletes_its_pods(fc: FakeCluster) -> None:
    fc.create(pytorch_job("gone", workers=1))
    wait_until(lambda: len(pods_of(fc, "gone")) == 2, "pods created")
    fc.delete(PT, "gone", "default")
    wait_until(lambda: pods_of(fc, "gone") == {}, "pods deleted with the job")


def test_kueue_queues_it_until_admitted(
    fc: FakeCluster, kueue: KueueController, controller: PyTorchJobController
) -> None:
    seed_queues(fc, "default", quota={"cpu": "100"})
    fc.create(pytorch_job("queued", labels={QUEUE_LABEL: "lq"}))
    held = wait_for(fc, PT, "queued", _true("Suspended"))
    assert held["spec"]["runPolicy"]["suspend"] is True
    workloads = [
        w
        for w in fc.objects("workloads", "default")
        if w["metadata"]["ownerReferences"][0]["name"] == "queued"
    ]
    [workload] = workloads
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [
        ("master", 1),
        ("worker", 2),
    ]
    controller.wait_ticks(3)
    assert pods_of(fc, "queued") == {}
    kueue.admit("queued", "default")
    running = wait_for(fc, PT, "queued", _true("Running"))
    assert running["spec"]["runPolicy"]["suspend"] is False
    assert len(pods_of(fc, "queued")) == 3
    no_errors(fc)
