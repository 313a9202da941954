"""TrainJob writes a platform team can trust: an explicit Kueue queue label is the queue the
job goes to (never replaced by the namespace's default queue), and submitting again after a
lost answer returns the job that was created instead of failing with `AlreadyExists`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from trainjob_support import creates, torch_runtime

from flarekit import ApiUnavailable, RetryPolicy
from flarekit._validation import ConfigError
from flarekit.job._trainjob import TrainJob
from flarekit_testing import FakeCluster
from kube_support import QUEUE_LABEL, client_for, seed_queues
from wait_support import wait_until


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"trainer": "v2.3.0", "kueue": "v0.19.2"}) as cluster:
        cluster.create(torch_runtime())
        # the namespace's default queue, and the one the user picks by label
        seed_queues(cluster, "default", "default", "picked")
        yield cluster


def _labels(fc: FakeCluster, name: str) -> dict[str, str]:
    stored = fc.get("trainjobs", name, "default") or {}
    labels: dict[str, str] = stored["metadata"]["labels"]
    return labels


def test_an_explicit_queue_label_is_the_queue_the_job_goes_to(fc: FakeCluster) -> None:
    job = TrainJob(
        "labelled",
        client=client_for(fc),
        image="example.com/train:1",
        labels={QUEUE_LABEL: "picked"},
    )
    job.submit()
    assert _labels(fc, "labelled")[QUEUE_LABEL] == "picked"


def test_a_label_naming_a_missing_queue_is_an_error_not_the_default(fc: FakeCluster) -> None:
    before = creates(fc, "trainjobs")
    job = TrainJob(
        "missing",
        client=client_for(fc),
        image="example.com/train:1",
        labels={QUEUE_LABEL: "missing-q"},
    )
    with pytest.raises(ConfigError, match="missing-q"):
        job.submit()
    assert creates(fc, "trainjobs") == before


def test_a_label_that_disagrees_with_local_queue_names_both() -> None:
    with pytest.raises(ConfigError) as info:
        TrainJob("both", image="example.com/train:1", local_queue="a", labels={QUEUE_LABEL: "b"})
    text = str(info.value)
    assert f"labels[{QUEUE_LABEL!r}]='b'" in text and "local_queue='a'" in text


def test_submitting_again_after_a_lost_answer_returns_the_created_job(fc: FakeCluster) -> None:
    fc.delay(lambda r: r.method == "POST" and r.path.endswith("/trainjobs"), 0.8, times=1)
    client = client_for(fc, timeout=0.3, retry=RetryPolicy(attempts=1))
    job = TrainJob("resubmitted", client=client, image="example.com/train:1", local_queue="picked")
    try:
        with pytest.raises(ApiUnavailable):
            job.submit()
        wait_until(lambda: fc.get("trainjobs", "resubmitted", "default"), "the first create lands")
        job.submit()  # not AlreadyExists: the stored job is the one this submit sends
    finally:
        fc.clear_faults()
        client.close()
    stored = fc.get("trainjobs", "resubmitted", "default") or {}
    assert job.status().name == "resubmitted"
    assert stored["metadata"]["uid"]
