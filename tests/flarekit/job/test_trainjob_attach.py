"""TrainJob.from_existing: attaching to TrainJobs submitted by flarekit or by anyone else."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from trainjob_support import TICK, torch_runtime

from flarekit._wait import WaitTimeout
from flarekit.client._errors import NotFound
from flarekit.job._jobstate import JobState
from flarekit.job._trainjob import TrainJob
from flarekit_testing import FakeCluster, KueueController, TrainJobController
from kube_support import client_for, seed_queues

JSON = dict[str, Any]
RUNTIMES = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"


def _custom_runtime() -> JSON:
    """A runtime whose trainer is replicated job `trainer`, container `pytorch` (not `node`)."""
    runtime = torch_runtime("custom")
    (job,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    job["name"] = "trainer"
    job["template"]["spec"]["template"]["spec"]["containers"] = [
        {"name": "sidecar", "image": "example.com/sidecar:1"},
        {"name": "pytorch", "image": "example.com/torch:1"},
    ]
    return runtime


def _foreign(name: str, spec: JSON, **metadata: Any) -> JSON:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": "default", **metadata},
        "spec": spec,
    }


def _runtime_reads(fc: FakeCluster) -> int:
    return sum(1 for r in fc.requests if r.method == "GET" and r.path.startswith(RUNTIMES))


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(
        releases={"trainer": "v2.3.0", "kueue": "v0.19.2", "jobset": "v0.12.0"},
        tick_interval=TICK,
        controllers=[TrainJobController(run_for=0.1), KueueController()],
    ) as cluster:
        cluster.create(torch_runtime())
        cluster.create(_custom_runtime())
        seed_queues(cluster, "default")
        yield cluster


@pytest.fixture(scope="module")
def idle() -> Iterator[FakeCluster]:
    """No controllers: objects keep exactly what was written (no status)."""
    with FakeCluster(releases={"trainer": "v2.3.0"}) as cluster:
        cluster.create(torch_runtime())
        yield cluster


def test_attach_reads_back_what_flarekit_submitted(fc: FakeCluster) -> None:
    client = client_for(fc)
    TrainJob(
        "mine", client=client, image="example.com/mnist:1", command=["torchrun"],
        args=["train.py"], num_nodes=2, num_proc_per_node=4,
        resources_per_node={"cpu": 2, "memory": "4Gi", "gpu": 1}, env={"EPOCHS": "3"},
        labels={"team": "ml"}, annotations={"note": "x"}, local_queue="lq",
        active_deadline_seconds=600,
    ).submit()  # fmt: skip
    attached = TrainJob.from_existing("mine", "default", client=client)
    assert (attached.name, attached.namespace) == ("mine", "default")
    assert (attached.runtime, attached.runtime_kind) == (
        "torch-distributed",
        "ClusterTrainingRuntime",
    )
    assert attached.image == "example.com/mnist:1"
    assert (attached.command, attached.args) == (["torchrun"], ["train.py"])
    assert (attached.num_nodes, attached.num_proc_per_node) == (2, 4)
    assert attached.resources_per_node == {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert attached.env == {"EPOCHS": "3"}
    assert attached.labels == {"team": "ml"} and attached.annotations == {"note": "x"}
    assert attached.local_queue == "lq" and attached.priority_class is None
    assert attached.active_deadline_seconds == 600
    assert attached.suspend_on_create is False  # the queued job's suspend is Kueue's
    # rendered again, it is the job that was submitted (pod options aside)
    spec = attached.to_dict()["spec"]
    assert spec["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == "1"
    assert attached.to_dict()["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "lq"

    assert attached.wait(timeout=10, poll=TICK, progress=False).state is JobState.SUCCEEDED
    assert str(attached.logs(node=1)).startswith("[simulated] TrainJob mine node 1: started")
    attached.delete()
    assert fc.get("trainjobs", "mine", "default") is None


def test_logs_of_a_foreign_job_come_from_its_runtimes_trainer(fc: FakeCluster) -> None:
    client = client_for(fc)
    ref = {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": "custom"}
    fc.create(_foreign("theirs", {"runtimeRef": ref, "trainer": {"numNodes": 1}}))
    before = _runtime_reads(fc)
    attached = TrainJob.from_existing("theirs", client=client)
    assert _runtime_reads(fc) == before  # status, wait and delete need no runtime
    assert attached.namespace == "default" and attached.runtime == "custom"
    assert attached.wait(timeout=10, poll=TICK, progress=False).state is JobState.SUCCEEDED
    # the trainer runs in replicated job `trainer`, container `pytorch` of the runtime
    assert (
        attached.logs()
        == "[simulated] TrainJob theirs trainer 0: started; its command does not run here\n"
        "[simulated] TrainJob theirs trainer 0: done; nothing ran\n"
    )
    assert attached.logs(tail=1) == "[simulated] TrainJob theirs trainer 0: done; nothing ran\n"
    assert _runtime_reads(fc) == before + 1  # read once, when logs first needed it
    attached.delete()
    assert fc.get("trainjobs", "theirs", "default") is None


def test_a_bare_job_without_status_reads_without_errors(idle: FakeCluster) -> None:
    client = client_for(idle)
    idle.create(_foreign("bare", {"runtimeRef": {"name": "deleted-since"}}))
    attached = TrainJob.from_existing("bare", "default", client=client)
    assert attached.runtime == "deleted-since"
    assert attached.image is None and attached.command == [] and attached.args == []
    assert attached.num_nodes is None and attached.resources_per_node == {}
    assert attached.env == {} and attached.labels == {} and attached.local_queue is None
    status = attached.status()
    assert status.state is JobState.PENDING and status.replicas == {}
    with pytest.raises(WaitTimeout):
        attached.wait(timeout=0, progress=False)
    # the runtime is gone: Trainer's default trainer (`node`), and a plain "no pod yet"
    with pytest.raises(LookupError, match=r"no pod for node 0 yet.*job 'node'"):
        attached.logs()
    attached.delete()
    assert idle.get("trainjobs", "bare", "default") is None


def test_env_from_secrets_has_no_parameter_and_is_left_out(idle: FakeCluster) -> None:
    secret = {"secretKeyRef": {"name": "token", "key": "value"}}
    env = [{"name": "PLAIN", "value": "1"}, {"name": "EMPTY"}, {"name": "S", "valueFrom": secret}]
    idle.create(_foreign("envs", {"runtimeRef": {"name": "torch-distributed"},
                                  "trainer": {"env": env}}))  # fmt: skip
    attached = TrainJob.from_existing("envs", client=client_for(idle))
    assert attached.env == {"PLAIN": "1", "EMPTY": ""}
    attached.delete()


def test_an_unreadable_runtime_leaves_the_default_trainer(idle: FakeCluster) -> None:
    idle.create(_foreign("denied", {"runtimeRef": {"name": "torch-distributed"}}))
    labels = {
        "jobset.sigs.k8s.io/jobset-name": "denied",
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
        "batch.kubernetes.io/job-completion-index": "0",
    }
    idle.add_pod("default", "denied-node-0-0-x", labels=labels, containers=["node"])
    idle.append_log("default", "denied-node-0-0-x", "hello")
    idle.deny("get", "clustertrainingruntimes")
    try:
        attached = TrainJob.from_existing("denied", client=client_for(idle))
        assert attached.logs() == "hello\n"
    finally:
        idle.clear_denies()
    attached.delete()


def test_a_missing_job_is_not_found(idle: FakeCluster) -> None:
    with pytest.raises(NotFound):
        TrainJob.from_existing("nobody", "default", client=client_for(idle))


def test_an_attached_job_has_every_attribute_of_a_constructed_one(idle: FakeCluster) -> None:
    client = client_for(idle)
    idle.create(_foreign("attrs", {"runtimeRef": {"name": "torch-distributed"}}))
    attached = TrainJob.from_existing("attrs", client=client)
    assert sorted(vars(attached)) == sorted(vars(TrainJob("attrs", client=client)))
    attached.delete()
