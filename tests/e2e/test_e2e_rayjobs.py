"""RayJobs through KubeRay: with a cluster made for the job (queued by Kueue), and on an existing
cluster; one whose entrypoint fails; and a queued one stopped and resumed through its Kueue
Workload.

On the control plane no Ray runs: KubeRay asks the head's simulated dashboard (see
`flarekit_testing.controlplane._raydash`) how the job goes, and the job runs as long as its submitter pod.
"""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import Backend, small_cluster

from flarekit import Client, TerminalFailure
from flarekit.cluster import Cluster
from flarekit.job import RayJob
from flarekit_testing.controlplane._kwok import EXIT_CODE_ENV


def _queued_job(
    name: str, entrypoint: str, namespace: str, client: Client, lq: str, **options: Any
) -> RayJob:
    """A RayJob on a cluster made for it, in LocalQueue `lq`, submitted."""
    return RayJob(
        name,
        entrypoint,
        namespace=namespace,
        cluster_config=small_cluster("unused", namespace, lq),
        client=client,
        **options,
    ).submit()


def test_job_with_its_own_queued_cluster_succeeds(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = _queued_job("hello", "python -c 'print(1)'", namespace, client, lq)
    status = job.wait(**backend.waits)
    assert status.succeeded
    assert (status.deployment_status, status.job_status) == ("Complete", "SUCCEEDED")
    assert status.local_queue == lq
    assert status.cluster_name is not None and status.cluster_name.startswith("hello-")
    assert status.job_id
    # The job's cluster is shut down once the job has finished.
    backend.wait(
        lambda: backend.get("rayclusters", str(status.cluster_name), namespace) is None,
        "the job's cluster to be deleted",
    )


def test_job_on_an_existing_cluster_succeeds_and_leaves_the_cluster(
    backend: Backend, namespace: str, client: Client
) -> None:
    cluster = Cluster(small_cluster("shared", namespace, local_queue=None), client)
    backend.queues(namespace)  # Kueue is installed: a cluster outside a queue is a choice
    cluster.config.local_queue = "lq"
    cluster.apply()
    cluster.wait_ready(**backend.waits)
    job = RayJob(
        "on-shared", "python job.py", namespace=namespace, cluster_name="shared", client=client
    ).submit()
    status = job.wait(**backend.waits)
    assert status.succeeded and status.cluster_name == "shared"
    assert backend.get("rayclusters", "shared", namespace) is not None
    assert job.delete()
    cluster.down(wait=True, **backend.waits)


def test_job_whose_entrypoint_fails_reports_the_failure(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = _queued_job(
        "broken", "python fail.py", namespace, client, lq,
        runtime_env={"env_vars": {EXIT_CODE_ENV: "3"}},
    )  # fmt: skip
    with pytest.raises(TerminalFailure):
        job.wait(**backend.waits)
    status = job.status()
    assert status.failed and status.job_status == "FAILED"
    assert status.deployment_status == "Failed"


def test_queued_job_is_stopped_and_resumed_through_its_workload(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = _queued_job(
        "pausable", "python long.py", namespace, client, lq,
        runtime_env={"env_vars": {"FLAREKIT_SIMULATED_DURATION": "600s"}},
    )  # fmt: skip
    backend.wait(lambda: job.status().deployment_status == "Running", "the job runs")
    job.stop()
    [workload] = backend.owned_by("workloads", namespace, "pausable")
    assert workload["spec"]["active"] is False
    backend.wait(lambda: job.status().suspended, "Kueue suspends the job")
    backend.wait(
        lambda: job.status().deployment_status == "Suspended", "KubeRay reports it suspended"
    )
    job.resume()
    [workload] = backend.owned_by("workloads", namespace, "pausable")
    assert workload["spec"]["active"] is True
    backend.wait(lambda: job.status().deployment_status == "Running", "the job runs again")
    assert job.delete()
