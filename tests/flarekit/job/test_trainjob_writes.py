"""TrainJob writes a platform team can trust: an explicit Kueue queue label is the queue the
job goes to (never replaced by the namespace's default queue), and submitting again after a
lost answer returns the job that was created instead of failing with `AlreadyExists`."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from trainjob_support import client_for, creates, kueue_queues, torch_runtime

from flarekit import ApiUnavailable, Client, RetryPolicy, from_kubeconfig
from flarekit._validation import ConfigError
from flarekit.job._trainjob import TrainJob
from flarekit.testing import FakeCluster

QUEUE = "kueue.x-k8s.io/queue-name"


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"trainer": "v2.3.0", "kueue": "v0.19.2"}) as cluster:
        cluster.create(torch_runtime())
        kueue_queues(cluster, queue="default")  # the namespace's default queue ...
        api = "kueue.x-k8s.io/" + cluster.resource("localqueues").storage_version
        cluster.create(  # ... and the one the user picks by label
            {
                "apiVersion": api,
                "kind": "LocalQueue",
                "metadata": {"name": "picked", "namespace": "default"},
                "spec": {"clusterQueue": "cq"},
            }
        )
        yield cluster


def _labels(fc: FakeCluster, name: str) -> dict[str, str]:
    stored = fc.get("trainjobs", name, "default") or {}
    labels: dict[str, str] = stored["metadata"]["labels"]
    return labels


def test_an_explicit_queue_label_is_the_queue_the_job_goes_to(fc: FakeCluster) -> None:
    job = TrainJob(
        "labelled", client=client_for(fc), image="example.com/train:1", labels={QUEUE: "picked"}
    )
    job.submit()
    assert _labels(fc, "labelled")[QUEUE] == "picked"


def test_a_label_naming_a_missing_queue_is_an_error_not_the_default(fc: FakeCluster) -> None:
    before = creates(fc, "trainjobs")
    job = TrainJob(
        "missing", client=client_for(fc), image="example.com/train:1", labels={QUEUE: "missing-q"}
    )
    with pytest.raises(ConfigError, match="missing-q"):
        job.submit()
    assert creates(fc, "trainjobs") == before


def test_a_label_that_disagrees_with_local_queue_names_both() -> None:
    with pytest.raises(ConfigError) as info:
        TrainJob("both", image="example.com/train:1", local_queue="a", labels={QUEUE: "b"})
    text = str(info.value)
    assert f"labels[{QUEUE!r}]='b'" in text and "local_queue='a'" in text


def test_submitting_again_after_a_lost_answer_returns_the_created_job(fc: FakeCluster) -> None:
    fc.delay(lambda r: r.method == "POST" and r.path.endswith("/trainjobs"), 0.8, times=1)
    client = Client(
        from_kubeconfig(fc.kubeconfig_path),
        namespace="default",
        timeout=0.3,
        retry=RetryPolicy(attempts=1),
    )
    job = TrainJob("resubmitted", client=client, image="example.com/train:1", local_queue="picked")
    try:
        with pytest.raises(ApiUnavailable):
            job.submit()
        deadline = time.monotonic() + 5
        while fc.get("trainjobs", "resubmitted", "default") is None:
            assert time.monotonic() < deadline, "the first create never landed"
            time.sleep(0.02)
        job.submit()  # not AlreadyExists: the stored job is the one this submit sends
    finally:
        fc.clear_faults()
        client.close()
    stored = fc.get("trainjobs", "resubmitted", "default") or {}
    assert job.status().name == "resubmitted"
    assert stored["metadata"]["uid"]
