"""RayJob end to end on FakeCluster with simulated KubeRay (no Kueue installed): submit, wait,
logs, stop, resume, delete, attaching, and what reaches the server when input is invalid."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rayjob_support import (
    RAYJOBS,
    TICK,
    deployment_status,
    existing_cluster,
    small_config,
    stored,
    submitter_pods,
)

from flarekit import AlreadyExists, Client
from flarekit._wait import TerminalFailure, WaitTimeout
from flarekit.cluster import ConfigError
from flarekit.job import RayJob, RayJobError, RayJobStatus
from flarekit_testing import FakeCluster, ManualClock, RayClusterController, RayJobController
from kube_support import writes
from wait_support import wait_until

FAILURE = "Traceback (most recent call last): ValueError: loss is NaN"


@pytest.fixture(scope="module")
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(scope="module")
def fc(clock: ManualClock) -> Iterator[FakeCluster]:
    controllers: list[Any] = [
        RayClusterController(ready_after=0),
        RayJobController(
            run_for=10,
            wait_for_cluster=True,
            fail_when=lambda obj: obj["metadata"]["name"].startswith("fail"),
            failure_message=FAILURE,
            logs=lambda job, pod: [f"hello from {job['metadata']['name']}"],
            clock=clock,
        ),
    ]
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=controllers
    ) as cluster:
        yield cluster
        assert cluster.controller_errors == []


def running(fc: FakeCluster, ns: str, name: str) -> None:
    wait_until(lambda: deployment_status(fc, ns, name) == "Running", f"{name} runs")


def test_submit_wait_logs_delete(
    fc: FakeCluster, client: Client, ns: str, clock: ManualClock
) -> None:
    job = RayJob(
        "train",
        "python train.py",
        namespace=ns,
        cluster_config=small_config(),
        runtime_env={"env_vars": {"EPOCHS": "3"}},
        client=client,
    )
    assert job.submit() is job
    obj = stored(fc, ns, "train")
    assert obj["spec"]["entrypoint"] == "python train.py"
    assert obj["spec"]["shutdownAfterJobFinishes"] is True

    running(fc, ns, "train")
    clock.advance(10)
    status = job.wait(timeout=10, poll=TICK, progress=False)
    assert isinstance(status, RayJobStatus)
    assert status.succeeded and not status.failed
    assert (status.deployment_status, status.job_status) == ("Complete", "SUCCEEDED")
    assert status.cluster_name is not None and status.cluster_name.startswith("train-")
    assert status.dashboard_url == f"{status.cluster_name}-head-svc.{ns}.svc.cluster.local:8265"
    assert status.start_time is not None and status.end_time is not None
    assert status.job_id is not None

    done = "[simulated] RayJob train: the simulation reports it SUCCEEDED (nothing ran)"
    logs = wait_until(lambda: done in job.logs() and job.logs(), "the submitter ends")
    assert "hello from train" in logs  # the test's lines, then the simulation's note
    assert job.logs(tail=1) == f"{done}\n"
    assert "hello from train" not in job.logs(tail=1)

    assert job.delete(wait=True, timeout=10) is True  # KubeRay's finalizer goes first
    assert fc.get(RAYJOBS, "train", ns) is None
    wait_until(lambda: not fc.objects("rayclusters", ns), "the job's cluster is deleted")
    assert job.delete() is False


def test_follow_streams_lines_until_the_submitter_ends(
    fc: FakeCluster, client: Client, ns: str, clock: ManualClock
) -> None:
    job = RayJob("follow", "python a.py", namespace=ns, cluster_config=small_config())
    job.client = client
    job.submit()
    wait_until(lambda: submitter_pods(fc, ns, "follow"), "the submitter pod starts")
    lines = job.logs(follow=True)
    assert next(lines) == "hello from follow"
    clock.advance(10)
    rest = list(lines)  # ends when the pod finishes
    assert rest[-1].endswith("the simulation reports it SUCCEEDED (nothing ran)")


def test_failure_quotes_kuberay_message(
    fc: FakeCluster, client: Client, ns: str, clock: ManualClock
) -> None:
    job = RayJob("fail-job", "python bad.py", namespace=ns, cluster_config=small_config())
    job.client = client
    job.submit()
    running(fc, ns, "fail-job")
    clock.advance(10)
    with pytest.raises(TerminalFailure) as caught:
        job.wait(timeout=10, poll=TICK, progress=False)
    assert caught.value.reason == FAILURE
    assert FAILURE in str(caught.value)
    assert f"RayJob {ns}/fail-job" in str(caught.value)
    status = job.status()
    assert status.failed and status.failure_reason == FAILURE
    assert "loss is NaN" in job.logs()


def test_wait_times_out_naming_the_state(fc: FakeCluster, client: Client, ns: str) -> None:
    job = RayJob("slow", "sleep 1000", namespace=ns, cluster_config=small_config())
    job.client = client
    job.submit()
    running(fc, ns, "slow")
    with pytest.raises(WaitTimeout) as caught:
        job.wait(timeout=0, progress=False)
    assert "Running" in caught.value.last_state
    job.delete()


def test_existing_cluster_job(fc: FakeCluster, client: Client, ns: str, clock: ManualClock) -> None:
    existing_cluster(fc, ns, "shared")
    job = RayJob("on-shared", "python a.py", namespace=ns, cluster_name="shared", client=client)
    job.submit()
    assert stored(fc, ns, "on-shared")["spec"]["clusterSelector"] == {"ray.io/cluster": "shared"}
    running(fc, ns, "on-shared")
    with pytest.raises(RayJobError, match=r"existing RayCluster 'shared'.*delete"):
        job.stop()
    clock.advance(10)
    assert job.wait(timeout=10, poll=TICK, progress=False).cluster_name == "shared"
    job.delete()
    assert fc.get("rayclusters", "shared", ns) is not None  # not the job's to delete


def test_stop_suspends_and_resume_starts_over(
    fc: FakeCluster, client: Client, ns: str, clock: ManualClock
) -> None:
    job = RayJob("pausable", "python a.py", namespace=ns, cluster_config=small_config())
    job.client = client
    job.submit()
    running(fc, ns, "pausable")
    job.stop()
    assert stored(fc, ns, "pausable")["spec"]["suspend"] is True
    wait_until(lambda: deployment_status(fc, ns, "pausable") == "Suspended", "suspended")
    wait_until(lambda: not fc.objects("rayclusters", ns), "its cluster is deleted")
    with pytest.raises(TerminalFailure, match="stopped"):
        job.wait(timeout=5, poll=TICK, progress=False)
    job.resume()
    assert stored(fc, ns, "pausable")["spec"]["suspend"] is False
    running(fc, ns, "pausable")
    clock.advance(10)
    assert job.wait(timeout=10, poll=TICK, progress=False).succeeded
    before = writes(fc)
    assert job.stop().succeeded  # a finished job is left as it is
    assert writes(fc) == before
    job.delete()


def test_a_job_that_keeps_its_cluster_cannot_be_suspended(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    job = RayJob(
        "keeper", "python a.py", namespace=ns, cluster_config=small_config(),
        shutdown_after_finish=False, client=client,
    )  # fmt: skip
    job.submit()
    before = writes(fc)
    with pytest.raises(RayJobError, match="keeps its cluster"):
        job.stop()
    assert writes(fc) == before
    job.delete()


def test_logs_before_the_submitter_starts(fc: FakeCluster, client: Client, ns: str) -> None:
    existing_cluster(fc, ns, "held", suspend=True)  # never ready: the job never starts
    job = RayJob("early", "python a.py", namespace=ns, cluster_name="held", client=client)
    job.submit()
    with pytest.raises(RayJobError, match="no submitter pod yet"):
        job.logs()
    job.delete()


def test_http_mode_has_no_submitter_logs(fc: FakeCluster, client: Client, ns: str) -> None:
    existing_cluster(fc, ns, "held", suspend=True)
    job = RayJob(
        "http", "python a.py", namespace=ns, cluster_name="held", submission_mode="HTTPMode",
        client=client,
    )  # fmt: skip
    job.submit()
    with pytest.raises(RayJobError, match=r"HTTPMode.*RayJobClient"):
        job.logs()


def test_attach_to_an_existing_job(fc: FakeCluster, client: Client, ns: str) -> None:
    original = RayJob(
        "attach", "python a.py", namespace=ns, cluster_config=small_config(),
        runtime_env={"pip": ["x"]}, entrypoint_num_cpus=1, client=client,
    )  # fmt: skip
    original.submit()
    attached = RayJob.from_existing("attach", ns, client=client)
    assert attached.namespace == ns
    assert (attached.entrypoint, attached.runtime_env) == ("python a.py", {"pip": ["x"]})
    assert attached.entrypoint_num_cpus == 1 and attached.shuts_down_cluster
    assert attached.cluster_config is not None and original.cluster_config is not None
    assert attached.cluster_config.num_workers == original.cluster_config.num_workers
    # Read back, it renders what the server holds, defaults the server filled in included.
    rendered = attached.to_dict()["spec"]
    assert rendered["submissionMode"] == "K8sJobMode"
    assert rendered["rayClusterSpec"] == original.to_dict()["spec"]["rayClusterSpec"]
    assert attached.status().name == "attach"
    assert attached.delete() is True


def test_attach_to_a_job_made_by_someone_else(fc: FakeCluster, client: Client, ns: str) -> None:
    from flarekit.cluster import render_raycluster

    cluster_spec = render_raycluster(small_config()).to_dict()["spec"]
    cluster_spec["headGroupSpec"]["template"]["spec"]["containers"].append(
        {"name": "sidecar", "image": "busybox"}
    )
    cluster_spec["workerGroupSpecs"][0]["replicas"] = 5  # above maxReplicas: not expressible
    fc.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "foreign", "namespace": ns},
            "spec": {"entrypoint": "python b.py", "rayClusterSpec": cluster_spec},
        }
    )
    attached = RayJob.from_existing("foreign", ns, client=client)
    assert attached.entrypoint == "python b.py"
    assert attached.cluster_config is None  # more workers than its maximum: not expressible
    assert attached.status().name == "foreign"
    assert attached.delete() is True


# -- nothing reaches the server -------------------------------------------------------------


def test_invalid_input_sends_no_request(fc: FakeCluster, client: Client, ns: str) -> None:
    job = RayJob("ok", "python a.py", namespace=ns, cluster_config=small_config(), client=client)
    job.entrypoint_num_cpus = -2
    assert job.cluster_config is not None
    job.cluster_config.worker_memory_requests = "lots"
    before = len(fc.requests)
    with pytest.raises(ConfigError) as caught:
        job.submit()
    assert caught.value.fields == ["cluster_config.worker_memory_requests", "entrypoint_num_cpus"]
    assert len(fc.requests) == before
    with pytest.raises(ConfigError):
        RayJob("Bad", "x", namespace=ns, cluster_name="c", client=client)
    assert len(fc.requests) == before


def test_a_taken_name_is_not_touched(fc: FakeCluster, client: Client, ns: str) -> None:
    existing_cluster(fc, ns, "c", suspend=True)
    first = RayJob("taken", "python a.py", namespace=ns, cluster_name="c", client=client)
    first.submit()
    second = RayJob("taken", "python other.py", namespace=ns, cluster_name="c", client=client)
    with pytest.raises(AlreadyExists):
        second.submit()
    assert stored(fc, ns, "taken")["spec"]["entrypoint"] == "python a.py"


@pytest.mark.parametrize(
    "option", [{"priority_class": "high"}, {"local_queue": "team"}], ids=["priority", "queue"]
)
def test_queueing_without_kueue_is_refused_before_any_write(
    fc: FakeCluster, client: Client, ns: str, option: dict[str, str]
) -> None:
    job = RayJob(
        "queued", "python a.py", namespace=ns, cluster_config=small_config(), client=client,
        **option,  # type: ignore[arg-type]
    )  # fmt: skip
    before = writes(fc)
    with pytest.raises(ConfigError) as caught:
        job.submit()
    assert caught.value.fields == list(option)
    assert "Kueue is not installed" in str(caught.value)
    assert writes(fc) == before
