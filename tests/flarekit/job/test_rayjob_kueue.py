"""RayJob under Kueue on FakeCluster: queues resolved before anything is created, queued jobs
created suspended and started on admission, stopping through the Workload."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rayjob_support import RAYJOBS, TICK, deployment_status, existing_cluster, small_config, stored

from flarekit import Client
from flarekit.cluster import ConfigError
from flarekit.job import RayJob
from flarekit.kueue import QueueNotFound, admission_state, workload_for
from flarekit_models.ray.v1 import RayJob as RayJobModel
from flarekit_testing import (
    FakeCluster,
    KueueController,
    ManualClock,
    RayClusterController,
    RayJobController,
)
from kube_support import QUEUE_LABEL, seed_queues, writes
from wait_support import wait_until


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="module")
def kueue() -> KueueController:
    return KueueController(pending=True)


@pytest.fixture(scope="module")
def fc(clock: ManualClock, kueue: KueueController) -> Iterator[FakeCluster]:
    controllers: list[Any] = [
        RayClusterController(ready_after=0),
        RayJobController(run_for=10, clock=clock),
        kueue,
    ]
    with FakeCluster(
        releases={"kuberay": "v1.7.0", "kueue": "v0.19.2"},
        tick_interval=TICK,
        controllers=controllers,
    ) as cluster:
        yield cluster
        assert cluster.controller_errors == []


def job(ns: str, client: Client, name: str = "train", **kwargs: Any) -> RayJob:
    kwargs.setdefault("cluster_config", small_config())
    return RayJob(name, "python train.py", namespace=ns, client=client, **kwargs)


def posts(fc: FakeCluster) -> int:
    return fc.request_count(method="POST")


def test_missing_queue_is_refused_before_anything_is_created(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns, "lq")
    before = posts(fc)
    with pytest.raises(QueueNotFound) as caught:
        job(ns, client, local_queue="nope").submit()
    assert isinstance(caught.value, ConfigError)
    assert caught.value.fields == ["local_queue"]
    assert "'lq'" in str(caught.value)  # the queues that do exist
    assert posts(fc) == before
    assert fc.objects(RAYJOBS, ns) == []


def test_no_queue_and_no_default_queue_is_refused(fc: FakeCluster, client: Client, ns: str) -> None:
    before = writes(fc)
    with pytest.raises(QueueNotFound) as caught:
        job(ns, client).submit()
    assert caught.value.fields == ["local_queue"]
    assert writes(fc) == before


def test_queued_job_waits_for_admission_then_runs(
    fc: FakeCluster, client: Client, kueue: KueueController, ns: str, clock: ManualClock
) -> None:
    seed_queues(fc, ns, "lq")
    queued = job(ns, client, "queued", local_queue="lq", priority_class="high")
    queued.submit()
    obj = stored(fc, ns, "queued")
    assert obj["spec"]["suspend"] is True  # created suspended, as Kueue expects
    assert obj["metadata"]["labels"][QUEUE_LABEL] == "lq"
    assert obj["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"

    model = client.get(RayJobModel, "queued", namespace=ns)
    workload = wait_until(lambda: workload_for(client, model), "Kueue makes the Workload")
    assert not admission_state(workload).admitted
    status = queued.status()
    assert status.suspended and status.local_queue == "lq" and not status.finished

    kueue.admit("queued", ns)
    wait_until(lambda: deployment_status(fc, ns, "queued") == "Running", "admitted and running")
    assert stored(fc, ns, "queued")["spec"]["suspend"] is False
    clock.advance(10)
    assert queued.wait(timeout=10, poll=TICK, progress=False).succeeded
    assert queued.delete()


def test_default_local_queue_is_used(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_queues(fc, ns, "default")
    job(ns, client, "defaulted").submit()
    obj = stored(fc, ns, "defaulted")
    assert obj["metadata"]["labels"][QUEUE_LABEL] == "default"
    assert obj["spec"]["suspend"] is True


def test_default_queue_rules_are_checked_before_writing(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns, "default")
    autoscaling = job(ns, client, cluster_config=small_config(enable_autoscaling=True))
    before = writes(fc)
    with pytest.raises(ConfigError) as caught:
        autoscaling.submit()
    assert caught.value.fields == ["cluster_config.enable_autoscaling"]
    assert "default LocalQueue 'default'" in str(caught.value)
    assert writes(fc) == before


def test_stop_deactivates_the_workload_of_a_queued_job(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    seed_queues(fc, ns, "lq")
    queued = job(ns, client, "stoppable", local_queue="lq")
    queued.submit()
    obj = client.get(RayJobModel, "stoppable", namespace=ns)
    wait_until(lambda: workload_for(client, obj), "Kueue makes the Workload")
    queued.stop()
    workload = workload_for(client, obj)
    assert workload is not None and workload.spec.active is False
    queued.resume()
    workload = workload_for(client, obj)
    assert workload is not None and workload.spec.active is True


def test_job_on_an_existing_cluster_is_not_queued(fc: FakeCluster, client: Client, ns: str) -> None:
    existing_cluster(fc, ns, "shared")
    before = fc.request_count(path="/apis/kueue.x-k8s.io")
    job(ns, client, "on-shared", cluster_config=None, cluster_name="shared").submit()
    assert fc.request_count(path="/apis/kueue.x-k8s.io") == before  # no queue lookup
    obj = stored(fc, ns, "on-shared")
    assert QUEUE_LABEL not in (obj["metadata"].get("labels") or {})
    assert "suspend" not in obj["spec"] or obj["spec"]["suspend"] is False
