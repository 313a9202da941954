"""RayJobs against the CRDs of several KubeRay releases: a job-owned cluster is accepted as
rendered (strict field validation, nothing pruned), and a field an older release lacks is
refused naming the parameter and the releases that have it, with nothing created."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from rayjob_support import RAYJOBS, stored

from flarekit import Client
from flarekit._wait import WaitTimeout
from flarekit.client import NotServed
from flarekit.cluster import ClusterConfiguration, ConfigError, WorkerGroup
from flarekit.job import JobState, RayJob
from flarekit_testing import FakeCluster
from kube_support import client_for, new_namespace

RELEASES = ("v1.1.1", "v1.4.2", "v1.7.0")


@pytest.fixture(scope="module", params=RELEASES)
def served(request: pytest.FixtureRequest) -> Iterator[tuple[FakeCluster, Client, str]]:
    with FakeCluster(releases={"kuberay": request.param}) as fc, client_for(fc) as client:
        yield fc, client, request.param


def rich_config() -> ClusterConfiguration:
    return ClusterConfiguration(
        "ignored",
        image="quay.io/modh/ray:2.47.1-py311-cu121",
        head_extended_resource_requests={"nvidia.com/gpu": 1},
        head_tolerations=[{"key": "head", "operator": "Exists", "effect": "NoSchedule"}],
        head_node_selector={"pool": "cpu"},
        num_workers=2,
        min_workers=1,
        max_workers=4,
        enable_autoscaling=True,
        worker_extended_resource_requests={"google.com/tpu": 4},
        worker_groups=[WorkerGroup("big", memory_requests="16Gi", memory_limits="16Gi")],
        envs={"HF_HOME": "/cache"},
        volumes=[{"name": "cache", "persistentVolumeClaim": {"claimName": "hf"}}],
        volume_mounts=[{"name": "cache", "mountPath": "/cache"}],
        image_pull_secrets=["quay"],
    )


def contained(part: Any, whole: Any) -> bool:
    """Everything in `part` is in `whole` (which may hold server defaults besides)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            k in whole and contained(v, whole[k]) for k, v in part.items()
        )
    if isinstance(part, list):
        return (
            isinstance(whole, list)
            and len(part) == len(whole)
            and all(contained(p, w) for p, w in zip(part, whole, strict=True))
        )
    return bool(part == whole)


def test_job_owned_cluster_is_accepted_as_rendered(served: Any) -> None:
    fc, client, release = served
    ns = new_namespace(fc)
    job = RayJob(
        "rich", "python train.py", namespace=ns, cluster_config=rich_config(),
        runtime_env={"pip": ["torch"]}, ttl_seconds_after_finished=60,
        active_deadline_seconds=600, entrypoint_num_cpus=1, entrypoint_resources={"TPU": 1},
        submitter_pod_template={"spec": {"restartPolicy": "Never", "containers": [
            {"name": "ray-job-submitter", "image": "quay.io/modh/ray:2.47.1-py311-cu121"}]}},
        client=client,
    )  # fmt: skip
    job.submit()
    obj = stored(fc, ns, "rich")
    rendered = job.to_dict()
    assert contained(rendered["spec"], obj["spec"]), release
    assert obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][1]["groupName"] == "big"


def test_fields_older_releases_lack_are_refused(served: Any) -> None:
    fc, client, release = served
    ns = new_namespace(fc)
    gcs = ClusterConfiguration("ignored", enable_gcs_ft=True, redis_address="redis:6379")
    job = RayJob(
        "newer", "python a.py", namespace=ns, cluster_config=gcs, submitter_backoff_limit=2,
        client=client,
    )  # fmt: skip
    if release != "v1.1.1":
        job.submit()
        assert fc.get(RAYJOBS, "newer", ns) is not None
        return
    with pytest.raises(ConfigError) as caught:
        job.submit()
    assert sorted(caught.value.fields) == [
        "cluster_config.enable_gcs_ft",
        "submitter_backoff_limit",
    ]
    text = str(caught.value)
    assert "KubeRay v1.4.2, v1.7.0" in text
    assert "spec.submitterConfig" in text and "gcsFaultToleranceOptions" in text
    assert fc.objects(RAYJOBS, ns) == []


def test_status_of_a_job_without_status(served: Any) -> None:
    fc, client, _ = served
    ns = new_namespace(fc)
    # Created directly, and no operator runs here to write a status.
    fc.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "fresh", "namespace": ns},
            "spec": {"entrypoint": "x", "clusterSelector": {"ray.io/cluster": "nowhere"}},
        }
    )
    job = RayJob.from_existing("fresh", ns, client=client)
    status = job.status()
    assert status.deployment_status is None and status.job_status is None
    assert status.state is JobState.PENDING and status.summary == "not started yet"
    assert not status.finished and not status.failed and status.failure_reason is None
    assert "RayJob" in status._repr_html_() and "fresh" in str(status)
    with pytest.raises(WaitTimeout) as caught:
        job.wait(timeout=0, progress=False)
    assert caught.value.last_state == "not started yet"


def test_without_kuberay_the_error_names_it() -> None:
    with FakeCluster(releases={"kueue": "v0.19.2"}) as fc, client_for(fc) as client:
        job = RayJob("x", "python a.py", cluster_name="c", client=client)
        with pytest.raises(NotServed, match="KubeRay is not installed"):
            job.submit()
