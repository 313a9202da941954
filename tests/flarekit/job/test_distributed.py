"""DistributedJob on FakeCluster: TrainJob, PyTorchJob, AppWrapper; refusals before requests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from trainjob_support import TICK, creates, torch_runtime

from flarekit._validation import ConfigError
from flarekit.job._distributed import DistributedJob
from flarekit.job._jobstate import JobState
from flarekit.job._pytorchjob import PyTorchJobRun
from flarekit.job._trainjob import TrainJob
from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    TrainJobController,
)
from kube_support import client_for, seed_queues

MOUNTS: list[str | dict[str, str]] = [
    "type=volume,src=datasets,dst=/data,readonly",
    {"type": "bind", "src": "/mnt/x", "dst": "/x"},
]


def _custom(fc: FakeCluster, group: str, version: str, plural: str, name: str) -> dict[str, Any]:
    api = kubernetes.client.CustomObjectsApi(fc.api_client())
    found: dict[str, Any] = api.get_namespaced_custom_object(
        group, version, "default", plural, name
    )
    return found


@pytest.fixture(scope="module")
def trainer() -> Iterator[FakeCluster]:
    with FakeCluster(
        releases={"trainer": "v2.3.0", "kueue": "v0.19.2", "jobset": "v0.12.0"},
        tick_interval=TICK,
        controllers=[TrainJobController(run_for=0.1), KueueController()],
    ) as fc:
        fc.create(torch_runtime())
        seed_queues(fc, "default")
        yield fc


def test_bad_input_is_refused_before_any_request(trainer: FakeCluster) -> None:
    before = len(trainer.requests)
    with pytest.raises(ConfigError) as caught:
        DistributedJob(
            "bad", script="train.py", j="-2x1", mem_mb="lots", gpu=-1,  # type: ignore[arg-type]
            mounts=["type=nfs,src=a,dst=/b"], clean_pod_policy="Sometimes",
            client=client_for(trainer),
        )  # fmt: skip
    assert caught.value.fields == ["j", "gpu", "mem_mb", "mounts[0]", "clean_pod_policy"]
    assert "'NxM'" in str(caught.value)
    with pytest.raises(ConfigError, match="exactly one of script and module"):
        DistributedJob("both", script="a.py", module="b")
    assert len(trainer.requests) == before


def test_runs_as_a_trainjob_where_trainer_is_installed(trainer: FakeCluster) -> None:
    job = DistributedJob(
        "ddp", script="train.py", args=["--epochs", "2"], image="example.com/train:1", j="2x4",
        cpu=2, gpu=1, mem_mb=4096, env={"SEED": "1"}, mounts=MOUNTS, service_account="trainer",
        image_pull_secret="registry", local_queue="lq", active_deadline_seconds=600,
        client=client_for(trainer),
    )  # fmt: skip
    run = job.submit()
    assert isinstance(run, TrainJob)
    spec = _custom(trainer, "trainer.kubeflow.org", "v1alpha1", "trainjobs", "ddp")["spec"]
    assert spec["trainer"]["command"] == ["torchrun", "train.py", "--epochs", "2"]
    assert (spec["trainer"]["numNodes"], spec["trainer"]["numProcPerNode"]) == (2, 4)
    assert spec["trainer"]["resourcesPerNode"]["requests"] == {
        "cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1",
    }  # fmt: skip
    assert spec["activeDeadlineSeconds"] == 600
    node = spec["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    pod = node["template"]["spec"]["template"]["spec"]
    assert pod["volumes"] == [
        {"name": "mount-datasets", "persistentVolumeClaim": {"claimName": "datasets"}},
        {"name": "mount-mnt-x", "hostPath": {"path": "/mnt/x"}},
    ]
    assert pod["containers"][0]["volumeMounts"][0] == {
        "name": "mount-datasets", "mountPath": "/data", "readOnly": True,
    }  # fmt: skip
    assert pod["imagePullSecrets"] == [{"name": "registry"}]
    assert run.wait(timeout=10, poll=0.02, progress=False).state is JobState.SUCCEEDED
    run.delete()


@pytest.mark.parametrize(
    ("option", "value", "why"),
    [
        ("ttl_seconds_after_finished", 60, "a TrainJob has no TTL"),
        ("backoff_limit", 3, "failurePolicy.maxRestarts"),
        ("clean_pod_policy", "All", "a TrainJob has no clean-pod policy"),
    ],
)
def test_run_policy_a_trainjob_lacks_is_refused(
    trainer: FakeCluster, option: str, value: Any, why: str
) -> None:
    before = creates(trainer, "trainjobs")
    job = DistributedJob(
        "rp", script="t.py", local_queue="lq", client=client_for(trainer), **{option: value}
    )
    with pytest.raises(ConfigError) as caught:
        job.submit()
    assert caught.value.fields == [option]
    assert "not supported on TrainJob" in str(caught.value) and why in str(caught.value)
    assert "PyTorchJob" in str(caught.value)  # where it would work
    assert creates(trainer, "trainjobs") == before


def test_runs_as_a_pytorchjob_with_the_training_operator_only() -> None:
    with FakeCluster(releases={"training-operator": "v1.9.4"}) as fc:
        job = DistributedJob(
            "legacy", module="pkg.train", args=["--lr", "0.1"], image="example.com/t:1", j="3x2",
            cpu="500m", mounts=MOUNTS[:1], ttl_seconds_after_finished=60, backoff_limit=2,
            clean_pod_policy="All", active_deadline_seconds=900, client=client_for(fc),
        )  # fmt: skip
        run = job.submit()
        assert isinstance(run, PyTorchJobRun) and not run.wrapped
        stored = _custom(fc, "kubeflow.org", "v1", "pytorchjobs", "legacy")
        spec = stored["spec"]
        assert spec["nprocPerNode"] == "2"
        assert spec["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
        assert spec["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
        container = spec["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
        assert container["name"] == "pytorch"
        assert container["command"] == ["torchrun", "-m", "pkg.train", "--lr", "0.1"]
        assert container["resources"]["limits"] == {"cpu": "500m"}
        assert {k: v for k, v in spec["runPolicy"].items() if k != "suspend"} == {
            "ttlSecondsAfterFinished": 60, "backoffLimit": 2, "cleanPodPolicy": "All",
            "activeDeadlineSeconds": 900, "schedulingPolicy": {"minAvailable": 3},
        }  # fmt: skip
        assert run.status().state is JobState.PENDING  # no status yet
        failed = {"type": "Failed", "status": "True", "reason": "PyTorchJobFailed",
                  "message": "master-0 exited with code 1"}  # fmt: skip
        fc.set_status("pytorchjobs", "legacy", {"conditions": [failed]}, "default")
        status = run.status()
        assert (status.state, status.message) == (JobState.FAILED, "master-0 exited with code 1")
        run.delete()
        assert fc.objects("pytorchjobs", "default") == []


def test_wrapped_in_an_appwrapper_and_queued() -> None:
    with FakeCluster(
        releases={"training-operator": "v1.9.4", "appwrapper": "v1.2.1", "kueue": "v0.19.2"},
        tick_interval=TICK,
        controllers=[AppWrapperController(succeed_after=0.2), KueueController()],
    ) as fc:
        seed_queues(fc, "default")
        job = DistributedJob(
            "wrapped", script="train.py", image="example.com/t:1", j="2x1", local_queue="lq",
            appwrapper=True, client=client_for(fc),
        )  # fmt: skip
        run = job.submit()
        assert isinstance(run, PyTorchJobRun) and run.wrapped
        stored = _custom(fc, "workload.codeflare.dev", "v1beta2", "appwrappers", "wrapped")
        # the queue label, and who created it as AppWrapper's webhook labels it
        assert stored["metadata"]["labels"] == {
            "kueue.x-k8s.io/queue-name": "lq",
            "workload.codeflare.dev/user": "flarekit-admin",
            "workload.codeflare.dev/userid": "flarekit-admin",
        }
        (component,) = stored["spec"]["components"]
        assert component["template"]["kind"] == "PyTorchJob"
        assert "labels" not in component["template"]["metadata"]
        assert component["podSets"] == [
            {"path": "template.spec.pytorchReplicaSpecs.Master.template", "replicas": 1},
            {"path": "template.spec.pytorchReplicaSpecs.Worker.template", "replicas": 1},
        ]
        assert run.wait(timeout=10, poll=0.02, progress=False).state is JobState.SUCCEEDED
        run.delete()


def test_appwrapper_needs_the_training_operator(trainer: FakeCluster) -> None:
    before = creates(trainer, "trainjobs")
    job = DistributedJob("aw", script="t.py", appwrapper=True, client=client_for(trainer))
    with pytest.raises(ConfigError, match=r"no kubeflow\.org API"):
        job.submit()
    with pytest.raises(ConfigError, match="cannot wrap a TrainJob"):
        job.to_trainjob()
    assert creates(trainer, "trainjobs") == before
