"""One script, every kind of job: RayJob, TrainJob, and DistributedJob run as a TrainJob, a
PyTorchJob and a PyTorchJob in an AppWrapper, each queued by Kueue on a FakeCluster with the
simulated operators. The script knows nothing of the kind: it uses only the `Job` and
`JobSpec` shapes (mypy holds every class to them in `flarekit.job`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from trainjob_support import TICK, torch_runtime

from flarekit import ApiError, NotFound
from flarekit.cluster import ClusterConfiguration
from flarekit.job import DistributedJob, Job, JobSpec, JobState, RayJob, TrainJob
from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    PyTorchJobController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from kube_support import client_for, seed_queues
from wait_support import wait_until

OUTPUT = "hello from the job"
FAST: dict[str, Any] = {"timeout": 30, "poll": TICK, "progress": False}


def _say(job: Any, pod: Any) -> list[str]:
    return [OUTPUT]


def run_the_script(spec: JobSpec, fc: FakeCluster) -> None:
    """Submit, follow, stop, resume and delete a job through its `Job` methods alone."""
    job = spec.submit()
    assert isinstance(job, Job)

    running = job.wait(until=JobState.RUNNING, **FAST)
    assert running.state is JobState.RUNNING and job.status().state is JobState.RUNNING

    wait_until(lambda: OUTPUT in _logs_so_far(job), "the job's output reaches its log", poll=TICK)
    assert job.logs(tail=1).strip().endswith(OUTPUT) or OUTPUT in job.logs(tail=5)
    assert OUTPUT in job.logs(since=3600)

    here = job.status()
    fc.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{here.name}-checked", "namespace": here.namespace},
            "involvedObject": {"kind": here.kind, "name": here.name, "namespace": here.namespace},
            "reason": "Checked",
            "message": "an event about the job",
            "type": "Normal",
        }
    )
    events = job.events()
    assert [e.reason for e in events if e.involved_object.kind == here.kind] == ["Checked"]
    # ... and its pods' events: the scheduler placed them
    assert any(e.involved_object.kind == "Pod" and e.reason == "Scheduled" for e in events), [
        (e.involved_object.kind, e.reason) for e in events
    ]

    stopped = job.stop()
    assert stopped.kind == here.kind
    assert job.wait(until=JobState.SUSPENDED, **FAST).state is JobState.SUSPENDED
    job.resume()
    assert job.wait(until=(JobState.RUNNING, JobState.SUCCEEDED), **FAST).state in (
        JobState.RUNNING,
        JobState.SUCCEEDED,
    )

    assert job.delete(wait=True, timeout=30) is True
    with pytest.raises(NotFound):
        job.status()
    assert job.delete() is False


def _logs_so_far(job: Job) -> str:
    """The log, or "" while the job's pod or container is not there yet (a job may report
    Running before its pods exist, and a pod before its container starts)."""
    try:
        return job.logs()
    except LookupError:
        return ""
    except ApiError as error:
        if error.code == 400 and "waiting to start" in error.message:
            return ""
        raise


def _cluster(releases: dict[str, str], *controllers: Any) -> FakeCluster:
    return FakeCluster(
        releases={**releases, "kueue": "v0.19.2"},
        tick_interval=TICK,
        controllers=[KueueController(), *controllers],
    )


@pytest.fixture
def ray_cluster() -> Iterator[FakeCluster]:
    with _cluster(
        {"kuberay": "v1.7.0"},
        RayClusterController(ready_after=0.0),
        RayJobController(run_for=3600, logs=_say),
    ) as fc:
        seed_queues(fc, "default")
        yield fc


@pytest.fixture
def trainer_cluster() -> Iterator[FakeCluster]:
    with _cluster(
        {"trainer": "v2.3.0", "jobset": "v0.12.0"}, TrainJobController(run_for=3600, logs=_say)
    ) as fc:
        fc.create(torch_runtime())
        seed_queues(fc, "default")
        yield fc


@pytest.fixture
def operator_cluster() -> Iterator[FakeCluster]:
    with _cluster(
        {"training-operator": "v1.9.4", "appwrapper": "v1.2.1"},
        PyTorchJobController(run_for=3600, logs=_say),
        AppWrapperController(),
    ) as fc:
        seed_queues(fc, "default")
        yield fc


def test_rayjob(ray_cluster: FakeCluster) -> None:
    config = ClusterConfiguration("ignored", num_workers=1)
    spec = RayJob(
        "rj", entrypoint="python train.py", cluster_config=config, local_queue="lq",
        client=client_for(ray_cluster),
    )  # fmt: skip
    run_the_script(spec, ray_cluster)


def test_trainjob(trainer_cluster: FakeCluster) -> None:
    spec = TrainJob(
        "tj", image="example.com/train:1", command=["python", "train.py"], local_queue="lq",
        client=client_for(trainer_cluster),
    )  # fmt: skip
    run_the_script(spec, trainer_cluster)


def test_distributed_job_as_a_trainjob(trainer_cluster: FakeCluster) -> None:
    spec = DistributedJob(
        "dt", script="train.py", image="example.com/t:1", j="2x1", local_queue="lq",
        client=client_for(trainer_cluster),
    )  # fmt: skip
    run_the_script(spec, trainer_cluster)


def test_distributed_job_as_a_pytorchjob(operator_cluster: FakeCluster) -> None:
    spec = DistributedJob(
        "dp", script="train.py", image="example.com/t:1", j="2x1", local_queue="lq",
        client=client_for(operator_cluster),
    )  # fmt: skip
    run_the_script(spec, operator_cluster)


def test_distributed_job_in_an_appwrapper(operator_cluster: FakeCluster) -> None:
    spec = DistributedJob(
        "da", script="train.py", image="example.com/t:1", j="2x1", local_queue="lq",
        appwrapper=True, client=client_for(operator_cluster),
    )  # fmt: skip
    run_the_script(spec, operator_cluster)
