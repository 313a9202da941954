"""Waiting for and watching a job: `wait(until=...)` for any set of states with a callback,
`logs(follow=True)` right after `submit()` on a queued job, `events()` about the job and its
pods, and the events a pending or failed job's status shows.

Events are checked on both backends with the same code: on FakeCluster, and on the real
control plane, where the scheduler and the controller manager write them. Neither runs
Kubeflow Trainer there, so the test plays JobSet's part: it makes the job's pod, labelled as
JobSet labels it."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from trainjob_support import TICK, torch_runtime

from flarekit._products import JOBSET_LABEL, REPLICATED_JOB_LABEL
from flarekit._wait import TerminalFailure
from flarekit.job import JobState, JobStatus, TrainJob
from flarekit.kueue import QueueOptOutWarning
from flarekit_testing import (
    ClusterBackend,
    ControlPlane,
    FakeCluster,
    KueueController,
    TrainJobController,
)
from kube_support import client_for, new_namespace, seed_queues
from wait_support import wait_until

FAST: dict[str, Any] = {"timeout": 30, "poll": TICK, "progress": False}
LINES = ["epoch 1 loss 0.9", "epoch 2 loss 0.5"]


def _print(job: Any, pod: Any) -> list[str]:
    return LINES


# -- wait(until=..., callback=...) ----------------------------------------------------------------


@pytest.fixture
def trainer() -> Iterator[FakeCluster]:
    with FakeCluster(
        releases={"trainer": "v2.3.0", "jobset": "v0.12.0", "kueue": "v0.19.2"},
        tick_interval=TICK,
        controllers=[KueueController(admit_after=1.0), TrainJobController(2.0, logs=_print)],
    ) as fc:
        fc.create(torch_runtime())
        seed_queues(fc, "default")
        yield fc


def _job(fc: FakeCluster, name: str = "tj") -> TrainJob:
    return TrainJob(
        name, image="example.com/train:1", command=["python", "train.py"], local_queue="lq",
        client=client_for(fc),
    )  # fmt: skip


def test_wait_until_a_state_named_as_text_with_a_callback(trainer: FakeCluster) -> None:
    job = _job(trainer).submit()
    seen: list[JobStatus] = []
    running = job.wait(until={"Running"}, callback=seen.append, **FAST)
    assert running.state is JobState.RUNNING
    assert seen and seen[-1] is running
    # the queue held it first: the callback saw it suspended before it ran
    assert seen[0].state in (JobState.SUSPENDED, JobState.PENDING), seen[0]
    done = job.wait(until=("succeeded", "FAILED"), **FAST)
    assert done.state is JobState.SUCCEEDED


def test_wait_refuses_what_is_no_state(trainer: FakeCluster) -> None:
    job = _job(trainer)
    with pytest.raises(ValueError, match=r"'Pending', 'Suspended', 'Running'.*got 'Runing'"):
        job.wait(until="Runing", **FAST)
    with pytest.raises(TypeError, match="callback must be callable"):
        job.wait(until="Running", callback="print", **FAST)  # type: ignore[arg-type]


def test_a_callback_may_end_the_wait(trainer: FakeCluster) -> None:
    job = _job(trainer).submit()

    class Enough(Exception):
        pass

    def stop_at_first(status: JobStatus) -> None:
        raise Enough(status.state)

    with pytest.raises(Enough):
        job.wait(callback=stop_at_first, **FAST)


# -- logs(follow=True) right after submit -------------------------------------------------------


def test_following_a_queued_job_waits_for_its_pod(trainer: FakeCluster) -> None:
    job = _job(trainer).submit()
    assert job.status().state is JobState.SUSPENDED  # queued: no pod yet
    with pytest.raises(LookupError, match="no pod for node 0 yet"):
        job.logs()  # without follow there is nothing to read yet
    lines = list(job.logs(follow=True))
    assert lines == LINES
    assert job.wait(**FAST).succeeded


def test_following_checks_its_options_before_waiting(trainer: FakeCluster) -> None:
    job = _job(trainer).submit()
    with pytest.raises(ValueError, match="tail must be"):
        job.logs(follow=True, tail=-1)


def test_following_a_job_that_ends_without_a_pod_says_so() -> None:
    with FakeCluster(
        releases={"trainer": "v2.3.0", "jobset": "v0.12.0"},
        tick_interval=TICK,
        controllers=[TrainJobController(0.0, fail=True)],
    ) as fc:
        fc.create(torch_runtime())
        job = TrainJob("tj", image="example.com/t:1", client=client_for(fc)).submit()
        # the job ends Failed once; its pods are made and ended with it, so take them away
        job.wait(until="Failed", **FAST)
        for pod in fc.objects("pods", "default"):
            fc.delete("pods", pod["metadata"]["name"], "default")
        with pytest.raises(TerminalFailure, match=r"ended \(Failed \(FailedJobs\)\) without a pod"):
            next(iter(job.logs(follow=True)))


# -- events, on both backends -------------------------------------------------------------------


def _runtime(backend: ClusterBackend) -> str:
    name = f"torch-{uuid.uuid4().hex[:8]}"
    backend.create({**torch_runtime(name), "metadata": {"name": name}})
    return name


def _unqueued_job(backend: ClusterBackend, namespace: str, runtime: str) -> TrainJob:
    client = client_for(backend, namespace=namespace)
    job = TrainJob(
        "watched", runtime=runtime, image="example.com/train:1", command=["python", "t.py"],
        no_queue=True, client=client,
    )  # fmt: skip
    with pytest.warns(QueueOptOutWarning, match="Kueue is installed"):
        job.submit()
    return job


def _trainer_pod(job: TrainJob, **spec: Any) -> dict[str, Any]:
    """The pod JobSet would make for the job's node 0 (the test plays JobSet here)."""
    return {
        "labels": {
            JOBSET_LABEL: job.name,
            REPLICATED_JOB_LABEL: "node",
            "batch.kubernetes.io/job-completion-index": "0",
        },
        "containers": [{"name": "node", "image": "example.com/train:1", **spec}],
    }


def test_events_about_a_job_include_its_pods(backend: ClusterBackend) -> None:
    namespace = new_namespace(backend, "watch-")
    job = _unqueued_job(backend, namespace, _runtime(backend))
    assert job.events() == [] or all(e.involved_object.kind != "Pod" for e in job.events())
    pod = f"{job.name}-node-0-0"
    backend.add_pod(namespace, pod, **_trainer_pod(job))
    backend.add_pod(namespace, "someone-else", containers=["main"])

    def scheduled() -> bool:
        return any(e.involved_object.name == pod and e.reason == "Scheduled" for e in job.events())

    wait_until(
        scheduled, "the scheduler's Scheduled event about the job's pod", timeout=60, poll=0.05
    )
    assert all(e.involved_object.name != "someone-else" for e in job.events())
    # a pending job's status shows them
    status = job.status()
    assert status.state is JobState.PENDING
    assert any(f"Scheduled Pod/{pod}" in line for line in status.events), status.events
    assert f"Pod/{pod}" in str(status)


def test_a_pod_that_cannot_be_placed_shows_in_the_status(control_plane: ControlPlane) -> None:
    """The real scheduler says why: no node has a million CPUs."""
    namespace = new_namespace(control_plane, "watch-")
    job = _unqueued_job(control_plane, namespace, _runtime(control_plane))
    pod = f"{job.name}-node-0-0"
    control_plane.add_pod(
        namespace, pod, **_trainer_pod(job, resources={"requests": {"cpu": "1000000"}})
    )

    def unschedulable() -> bool:
        return any("FailedScheduling" in line for line in job.status().events)

    wait_until(
        unschedulable,
        "the scheduler's FailedScheduling event in the job's status",
        timeout=60,
        poll=0.05,
    )
    status = job.status()
    line = next(line for line in status.events if "FailedScheduling" in line)
    assert line.startswith(f"Warning FailedScheduling Pod/{pod}")
    assert "Insufficient cpu" in line, line


def test_queue_opt_out_leaves_no_queue_label(backend: ClusterBackend) -> None:
    namespace = new_namespace(backend, "watch-")
    job = _unqueued_job(backend, namespace, _runtime(backend))
    stored = backend.get("trainjobs", job.name, namespace)
    assert stored is not None
    assert "kueue.x-k8s.io/queue-name" not in (stored["metadata"].get("labels") or {})
    assert not stored["spec"].get("suspend")


def test_queue_opt_out_names_the_default_queue_kueue_would_use() -> None:
    with FakeCluster() as fc:
        seed_queues(fc, "default", "default")
        fc.create(torch_runtime())
        job = TrainJob("tj", image="example.com/t:1", no_queue=True, client=client_for(fc))
        with pytest.warns(QueueOptOutWarning, match="LocalQueue 'default' takes it anyway"):
            job.submit()


def test_queue_opt_out_without_kueue_is_silent() -> None:
    with FakeCluster(releases={"trainer": "v2.3.0", "jobset": "v0.12.0"}) as fc:
        fc.create(torch_runtime())
        job = TrainJob("tj", image="example.com/t:1", no_queue=True, client=client_for(fc))
        with warnings.catch_warnings():
            warnings.simplefilter("error", QueueOptOutWarning)
            job.submit()


def test_queue_opt_out_with_a_queue_is_refused() -> None:
    from flarekit import ConfigError

    with pytest.raises(ConfigError, match=r"local_queue.*given with no_queue=True") as info:
        TrainJob("tj", image="example.com/t:1", no_queue=True, local_queue="lq")
    assert "priority_class" not in str(info.value)
    with pytest.raises(ConfigError, match=r"no_queue.*expected True or False"):
        TrainJob("tj", image="example.com/t:1", no_queue="yes")  # type: ignore[arg-type]
