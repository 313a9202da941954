"""TrainJob.stop() / resume(): a queued job through its Kueue Workload, others by suspension."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from trainjob_support import TICK, torch_runtime

from flarekit.job._jobstate import JobState
from flarekit.job._trainjob import TrainJob
from flarekit_testing import FakeCluster, KueueController, TrainJobController
from kube_support import QUEUE_LABEL, client_for, seed_queues
from wait_support import wait_until

JSON = dict[str, Any]
RELEASES = {"trainer": "v2.3.0", "kueue": "v0.19.2", "jobset": "v0.12.0"}


def _writes(fc: FakeCluster) -> int:
    return sum(1 for r in fc.requests if r.method != "GET")


def _raw(name: str, labels: dict[str, str] | None = None) -> JSON:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
        "spec": {"runtimeRef": {"name": "torch-distributed"}},
    }


@pytest.fixture(scope="module")
def slow() -> Iterator[FakeCluster]:
    """Jobs run until stopped, under Kueue."""
    with FakeCluster(
        releases=RELEASES,
        tick_interval=TICK,
        controllers=[KueueController(), TrainJobController(run_for=3600)],
    ) as fc:
        fc.create(torch_runtime())
        seed_queues(fc, "default")
        yield fc


@pytest.fixture(scope="module")
def idle() -> Iterator[FakeCluster]:
    """Kueue and Trainer served, no controllers: nothing makes Workloads or statuses."""
    with FakeCluster(releases=RELEASES) as fc:
        fc.create(torch_runtime())
        yield fc


def _workloads(fc: FakeCluster, job: str) -> list[JSON]:
    """The Workloads Kueue made for TrainJob `job` (owned by it)."""
    return [
        w
        for w in fc.objects("workloads", "default")
        if any(ref.get("name") == job for ref in w["metadata"].get("ownerReferences") or [])
    ]


def _patched(fc: FakeCluster, since: int) -> set[str]:
    """The resources (plurals) patched from the `since`-th request on."""
    return {r.path.rsplit("/", 2)[-2] for r in fc.requests[since:] if r.method == "PATCH"}


def _state(job: TrainJob) -> JobState:
    return job.status().state


def test_a_queued_job_is_stopped_through_its_workload(slow: FakeCluster) -> None:
    job = TrainJob("queued", client=client_for(slow), local_queue="lq").submit()
    wait_until(lambda: _state(job) is JobState.RUNNING, "the job runs")
    assert len(_workloads(slow, "queued")) == 1
    before = len(slow.requests)
    job.stop()
    (workload,) = _workloads(slow, "queued")
    assert workload["spec"]["active"] is False
    # Kueue owns spec.suspend of a queued job: stop() leaves it to Kueue's eviction ...
    assert _patched(slow, before) == {"workloads"}
    wait_until(lambda: _state(job) is JobState.SUSPENDED, "Kueue evicts and suspends the job")
    before = len(slow.requests)
    job.resume()
    (workload,) = _workloads(slow, "queued")
    assert workload["spec"]["active"] is True
    assert _patched(slow, before) == {"workloads"}  # ... and admits it again
    wait_until(lambda: _state(job) is JobState.RUNNING, "Kueue admits the job again")
    job.delete()


def test_an_attached_queued_job_stops_the_same_way(slow: FakeCluster) -> None:
    TrainJob("other", client=client_for(slow), local_queue="lq").submit()
    wait_until(lambda: _workloads(slow, "other"), "Kueue makes the Workload")
    attached = TrainJob.from_existing("other", client=client_for(slow))
    attached.stop()
    assert [w["spec"]["active"] for w in _workloads(slow, "other")] == [False]
    attached.delete()


def test_a_job_outside_any_queue_is_suspended(slow: FakeCluster) -> None:
    slow.create(_raw("unqueued"))
    job = TrainJob.from_existing("unqueued", client=client_for(slow))
    wait_until(lambda: _state(job) is JobState.RUNNING, "the job runs")
    job.stop()
    assert (slow.get("trainjobs", "unqueued", "default") or {})["spec"]["suspend"] is True
    wait_until(lambda: _state(job) is JobState.SUSPENDED, "the job is suspended")
    assert not _workloads(slow, "unqueued")
    job.resume()
    assert (slow.get("trainjobs", "unqueued", "default") or {})["spec"]["suspend"] is False
    wait_until(lambda: _state(job) is JobState.RUNNING, "the job runs again")
    job.delete()


def test_a_queued_job_without_a_workload_yet_is_a_clear_error(idle: FakeCluster) -> None:
    idle.create(_raw("early", {QUEUE_LABEL: "lq"}))
    job = TrainJob.from_existing("early", client=client_for(idle))
    before = _writes(idle)
    with pytest.raises(LookupError, match="default/early is queued but Kueue has not made"):
        job.stop()
    assert _writes(idle) == before
    assert (idle.get("trainjobs", "early", "default") or {})["spec"].get("suspend") is not True
    job.delete()


def test_a_finished_job_is_left_as_it_is(idle: FakeCluster) -> None:
    idle.create(_raw("done"))
    complete = {"type": "Complete", "status": "True", "reason": "AllJobsCompleted",
                "message": "jobset completed successfully",
                "lastTransitionTime": "2025-01-01T00:00:00Z"}  # fmt: skip
    idle.set_status("trainjobs", "done", {"conditions": [complete]}, "default")
    job = TrainJob.from_existing("done", client=client_for(idle))
    before = _writes(idle)
    assert job.stop().state is JobState.SUCCEEDED
    assert _writes(idle) == before
    job.delete()
