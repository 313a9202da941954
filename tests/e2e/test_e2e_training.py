"""Training jobs: a TrainJob from Trainer's upstream `torch-distributed` runtime runs through
Trainer and JobSet to Succeeded, one whose trainer fails ends Failed, a queued one is stopped
and resumed through its Kueue Workload; `DistributedJob` becomes a TrainJob, and, in an
AppWrapper, a training-operator PyTorchJob."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from e2e_support import RUNTIME, Backend

from flarekit import Client, TerminalFailure
from flarekit.job import DistributedJob, Job, JobState, TrainJob
from flarekit_testing.controlplane._kwok import DURATION_ENV, EXIT_CODE_ENV
from kube_support import QUEUE_LABEL

RESOURCES = {"cpu": 1, "memory": "2Gi"}


def _trainjob(name: str, namespace: str, client: Client, lq: str, **options: Any) -> TrainJob:
    """A two-node TrainJob in LocalQueue `lq`, from Trainer's `torch-distributed` runtime unless
    `options` name another."""
    options.setdefault("runtime", RUNTIME)
    return TrainJob(
        name,
        namespace=namespace,
        image="pytorch/pytorch:2.7.1",
        command=["python", "train.py"],
        num_nodes=2,
        resources_per_node=RESOURCES,
        local_queue=lq,
        client=client,
        **options,
    )


def _distributed(name: str, namespace: str, client: Client, lq: str, **options: Any) -> Job:
    """A two-node `DistributedJob` in LocalQueue `lq`, submitted (what it became)."""
    return DistributedJob(
        name,
        script="train.py",
        image="pytorch/pytorch:2.7.1",
        j="2x1",
        cpu=1,
        mem_mb=2048,
        local_queue=lq,
        namespace=namespace,
        client=client,
        **options,
    ).submit()


def test_trainjob_from_the_upstream_runtime_succeeds(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = _trainjob("train", namespace, client, lq).submit()
    status = job.wait(**backend.waits)
    assert status.state is JobState.SUCCEEDED
    stored = backend.get("trainjobs", "train", namespace) or {}
    assert stored["metadata"]["labels"][QUEUE_LABEL] == lq
    assert stored["spec"]["runtimeRef"]["name"] == RUNTIME
    # Trainer ran it as a JobSet of the same name, whose pods ran on the nodes.
    assert backend.get("jobsets", "train", namespace) is not None


def _no_retry_runtime(backend: Backend) -> str:
    """The upstream runtime with `backoffLimit: 0` on its Jobs, as an admin would make it:
    with upstream's (Kubernetes' default of six retries, with a back-off of minutes) a failing
    trainer takes ten minutes to fail its TrainJob on the real stack."""
    name = f"{RUNTIME}-no-retry"
    if backend.get("clustertrainingruntimes", name) is None:
        runtime = backend.get("clustertrainingruntimes", RUNTIME) or {}
        spec = copy.deepcopy(runtime["spec"])
        for job in spec["template"]["spec"]["replicatedJobs"]:
            job["template"]["spec"]["backoffLimit"] = 0
        labels = runtime["metadata"].get("labels") or {}
        meta = {"name": name, "labels": labels}
        backend.cluster.create(
            {**{k: runtime[k] for k in ("apiVersion", "kind")}, "metadata": meta, "spec": spec}
        )
    return name


def test_trainjob_whose_trainer_fails_ends_failed(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    runtime = _no_retry_runtime(backend)
    job = _trainjob("broken", namespace, client, lq, env={EXIT_CODE_ENV: "2"}, runtime=runtime)
    job = job.submit()
    with pytest.raises(TerminalFailure):
        job.wait(**backend.waits)
    status = job.status()
    assert status.state is JobState.FAILED
    assert status.message


def test_queued_trainjob_is_stopped_and_resumed_through_its_workload(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = _trainjob("pausable", namespace, client, lq, env={DURATION_ENV: "600s"}).submit()
    backend.wait(lambda: job.status().state is JobState.RUNNING, "the job runs")
    job.stop()
    [workload] = backend.owned_by("workloads", namespace, "pausable")
    assert workload["spec"]["active"] is False
    backend.wait(lambda: job.status().state is JobState.SUSPENDED, "Kueue suspends it")
    job.resume()
    [workload] = backend.owned_by("workloads", namespace, "pausable")
    assert workload["spec"]["active"] is True
    backend.wait(lambda: job.status().state is JobState.RUNNING, "it runs again")
    job.delete()


def test_distributed_job_becomes_a_trainjob(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = _distributed("dist", namespace, client, lq)
    assert isinstance(job, TrainJob)
    status = job.wait(**backend.waits)
    assert status.state is JobState.SUCCEEDED


def test_distributed_job_in_an_appwrapper_is_a_pytorchjob(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    run = _distributed("wrapped", namespace, client, lq, appwrapper=True)
    status = run.wait(**backend.waits)
    assert status.state is JobState.SUCCEEDED
    [wrapper] = backend.objects("appwrappers", namespace)
    assert wrapper["metadata"]["labels"][QUEUE_LABEL] == lq
    [pytorchjob] = backend.objects("pytorchjobs", namespace)
    assert [r["kind"] for r in pytorchjob["metadata"]["ownerReferences"]] == ["AppWrapper"]
