"""TrainJob end to end on FakeCluster with the simulated Trainer and Kueue controllers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from trainjob_support import TICK, creates, torch_runtime

from flarekit._validation import ConfigError
from flarekit._wait import TerminalFailure
from flarekit.job._jobstate import JobState
from flarekit.job._runtimes import list_runtimes
from flarekit.job._trainjob import TrainJob
from flarekit.kueue import QueueNotFound
from flarekit_testing import FakeCluster, KueueController, TrainJobController
from flarekit_testing.operators._base import SimController
from kube_support import client_for, seed_queues

TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs"
POD_OPTIONS: dict[str, Any] = {
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}],
    "volume_mounts": [{"name": "data", "mountPath": "/data"}],
    "node_selector": {"pool": "gpu"},
    "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "service_account": "trainer",
}


def _cluster(trainer: str, *controllers: SimController) -> FakeCluster:
    return FakeCluster(
        releases={"trainer": trainer, "kueue": "v0.19.2", "jobset": "v0.12.0"},
        tick_interval=TICK,
        controllers=list(controllers),
    )


@pytest.fixture(scope="module")
def v23() -> Iterator[FakeCluster]:
    with _cluster("v2.3.0", TrainJobController(run_for=0.1), KueueController()) as fc:
        fc.create(torch_runtime())
        seed_queues(fc, "default")
        yield fc


@pytest.fixture(scope="module")
def v20() -> Iterator[FakeCluster]:
    with _cluster("v2.0.1", TrainJobController(run_for=0.1), KueueController()) as fc:
        fc.create(torch_runtime())
        seed_queues(fc, "default")
        yield fc


def _read(fc: FakeCluster, name: str) -> dict[str, object]:
    api = kubernetes.client.CustomObjectsApi(fc.api_client())
    found: dict[str, object] = api.get_namespaced_custom_object(
        "trainer.kubeflow.org", "v1alpha1", "default", "trainjobs", name
    )
    return found


def test_bad_input_is_refused_before_any_request(v23: FakeCluster) -> None:
    client = client_for(v23)
    before = len(v23.requests)
    with pytest.raises(ConfigError) as caught:
        TrainJob(
            "bad",
            client=client,
            num_nodes=-2,
            resources_per_node={"memory": "lots", "cpu": "8Gb", "gpu": -1, "tpu": 1},
            env={"OK": 1},  # type: ignore[dict-item]
            volume_mounts=[{"name": "nope", "mountPath": "/x"}],
            volumes=[{"name": "data", "emptyDir": {}}],
        )
    fields = caught.value.fields
    assert "num_nodes" in fields
    assert "resources_per_node['memory']" in fields
    assert "resources_per_node['cpu']" in fields
    assert "resources_per_node['nvidia.com/gpu']" in fields
    assert "resources_per_node['tpu']" in fields
    assert "env['OK']" in fields
    assert "volume_mounts[0].name" in fields
    assert "'8Gi'" in str(caught.value)  # the hint for "8Gb"
    assert len(v23.requests) == before


def test_submit_wait_status_and_delete_on_trainer_2_3(v23: FakeCluster) -> None:
    client = client_for(v23)
    job = TrainJob(
        "mnist",
        client=client,
        image="example.com/mnist:1",
        command=["torchrun", "train.py"],
        num_nodes=2,
        resources_per_node={"cpu": 2, "memory": "4Gi", "gpu": 1},
        env={"EPOCHS": "3"},
        local_queue="lq",
        priority_class=None,
        **POD_OPTIONS,
    ).submit()
    stored = _read(v23, "mnist")
    spec = stored["spec"]
    assert isinstance(spec, dict)
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "lq"  # type: ignore[index]
    assert spec["trainer"]["numNodes"] == 2
    assert spec["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == "1"
    assert spec["trainer"]["env"] == [{"name": "EPOCHS", "value": "3"}]
    assert "podSpecOverrides" not in spec and "podTemplateOverrides" not in spec
    # flarekit's patch, and the empty one Kueue's webhook adds to every TrainJob
    patch, kueue = spec["runtimePatches"]
    assert kueue == {
        "manager": "kueue.x-k8s.io/manager",
        "trainingRuntimeSpec": {"template": {"spec": {}}},
    }
    (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    pod = node["template"]["spec"]["template"]["spec"]
    assert node["name"] == "node"
    assert pod["serviceAccountName"] == "trainer"
    assert pod["nodeSelector"] == {"pool": "gpu"}
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "datasets"
    assert pod["containers"] == [
        {"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    ]
    assert creates(v23, "trainjobs") >= 1

    final = job.wait(timeout=10, poll=0.02, progress=False)
    assert final.state is JobState.SUCCEEDED
    assert job.status().reason == "AllJobsCompleted"
    job.delete()
    assert not [o for o in v23.objects("trainjobs", "default") if o["metadata"]["name"] == "mnist"]


def test_pod_options_land_in_pod_spec_overrides_on_trainer_2_0(v20: FakeCluster) -> None:
    client = client_for(v20)
    before = creates(v20, "trainjobs")
    job = TrainJob("old", client=client, image="example.com/x:1", local_queue="lq", **POD_OPTIONS)
    job.submit()
    # the Trainer CRD is readable here, so negotiation chose podSpecOverrides: one create
    # (tests/flarekit/compat/test_field_availability_trainer.py covers the trying fallback)
    assert creates(v20, "trainjobs") - before == 1
    spec = _read(v20, "old")["spec"]
    assert isinstance(spec, dict)
    assert "runtimePatches" not in spec
    (override,) = spec["podSpecOverrides"]
    assert override["targetJobs"] == [{"name": "node"}]
    assert override["serviceAccountName"] == "trainer"
    assert override["tolerations"][0]["key"] == "gpu"
    assert override["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert job.wait(timeout=10, poll=0.02, progress=False).state is JobState.SUCCEEDED

    # learnt once per client: the next job takes one create
    before = creates(v20, "trainjobs")
    TrainJob("old2", client=client, local_queue="lq", node_selector={"pool": "a"}).submit()
    assert creates(v20, "trainjobs") - before == 1

    # what Trainer 2.0 cannot say is refused by name, and nothing is created
    before = creates(v20, "trainjobs")
    with pytest.raises(ConfigError) as caught:
        TrainJob(
            "aff", client=client, local_queue="lq", affinity={"nodeAffinity": {}},
            image_pull_secrets=["registry"],
        ).submit()  # fmt: skip
    assert caught.value.fields == ["affinity", "image_pull_secrets"]
    assert "podSpecOverrides" in str(caught.value)
    assert creates(v20, "trainjobs") == before

    with pytest.raises(ConfigError) as caught:
        TrainJob("late", client=client, local_queue="lq", active_deadline_seconds=60).submit()
    assert caught.value.fields == ["active_deadline_seconds"]
    assert "old" in {o["metadata"]["name"] for o in v20.objects("trainjobs", "default")}
    assert "late" not in {o["metadata"]["name"] for o in v20.objects("trainjobs", "default")}


def test_missing_queue_is_an_error_before_creating(v23: FakeCluster) -> None:
    before = creates(v23, "trainjobs")
    with pytest.raises(QueueNotFound) as caught:
        TrainJob("queued", client=client_for(v23), local_queue="nope").submit()
    assert "lq" in str(caught.value)
    assert creates(v23, "trainjobs") == before


def test_missing_runtime_lists_the_available_ones(v23: FakeCluster) -> None:
    with pytest.raises(LookupError, match="torch-distributed"):
        TrainJob("x", client=client_for(v23), runtime="tensorflow").submit()


def test_list_runtimes_summarises_the_policy(v23: FakeCluster) -> None:
    (runtime,) = list_runtimes(client_for(v23), "default")
    assert runtime.name == "torch-distributed"
    assert runtime.kind == "ClusterTrainingRuntime"
    assert (runtime.policy, runtime.framework, runtime.num_nodes) == ("torch", "torch", 1)
    assert (runtime.trainer_job, runtime.trainer_container) == ("node", "node")
    assert runtime.image == "example.com/torch:1"


def test_failure_quotes_trainer_message() -> None:
    message = "jobset failed: node-0 exited with 1"
    with _cluster(
        "v2.3.0", TrainJobController(fail=True, failure_message=message), KueueController()
    ) as fc:
        fc.create(torch_runtime())
        seed_queues(fc, "default")
        job = TrainJob("boom", client=client_for(fc), local_queue="lq").submit()
        with pytest.raises(TerminalFailure, match="node-0 exited with 1"):
            job.wait(timeout=10, poll=0.02, progress=False)
        assert job.status().state is JobState.FAILED


def test_suspend_and_resume_without_kueue() -> None:
    with FakeCluster(
        releases={"trainer": "v2.3.0"}, tick_interval=TICK, controllers=[TrainJobController(3600)]
    ) as fc:
        fc.create(torch_runtime())
        job = TrainJob("held", client=client_for(fc), suspend=True).submit()
        stored = _read(fc, "held")
        assert stored["spec"]["suspend"] is True  # type: ignore[index]
        assert "labels" not in stored["metadata"]  # type: ignore[operator]
        assert job.status().state is JobState.SUSPENDED
        job.resume()
        assert _read(fc, "held")["spec"]["suspend"] is False  # type: ignore[index]
        job.suspend()
        assert _read(fc, "held")["spec"]["suspend"] is True  # type: ignore[index]


def test_logs_of_a_node_and_following() -> None:
    # No simulated Trainer: the only pods are those added here (one would add its own pods
    # as soon as the job may run, racing with the test's).
    with FakeCluster(releases={"trainer": "v2.3.0"}) as fc:
        fc.create(torch_runtime())
        job = TrainJob("logged", client=client_for(fc), num_nodes=2).submit()
        with pytest.raises(LookupError, match="no pod for node 0"):
            job.logs()
        for index in (0, 1):
            labels = {
                "jobset.sigs.k8s.io/jobset-name": "logged",
                "jobset.sigs.k8s.io/replicatedjob-name": "node",
                "batch.kubernetes.io/job-completion-index": str(index),
            }
            name = f"logged-node-0-{index}-test"
            fc.add_pod("default", name, labels=labels, containers=["node"], phase="Running")
            fc.append_log("default", name, f"rank {index} epoch 1\nrank {index} epoch 2")
        assert job.logs(node=1) == "rank 1 epoch 1\nrank 1 epoch 2\n"
        assert job.logs(tail=1) == "rank 0 epoch 2\n"
        assert [p.index for p in job.pods()] == [0, 1]
        fc.finish_pod("default", "logged-node-0-0-test")
        assert list(job.logs(follow=True)) == ["rank 0 epoch 1", "rank 0 epoch 2"]
