"""RayJobs through KubeRay: with a cluster made for the job (queued by Kueue), and on an existing
cluster; one whose entrypoint fails; and a queued one stopped and resumed through its Kueue
Workload.

On the control plane no Ray runs: KubeRay asks the head's simulated dashboard (see
`flarekit.testing._cp_raydash`) how the job goes, and the job runs as long as its submitter pod.
"""

from __future__ import annotations

import pytest
from e2e_support import Backend

from flarekit import TerminalFailure
from flarekit.cluster import Cluster, ClusterConfiguration
from flarekit.job import RayJob
from flarekit.testing._cp_kwok import EXIT_CODE_ENV


def _cluster(name: str, namespace: str, local_queue: str | None = "lq") -> ClusterConfiguration:
    return ClusterConfiguration(
        name,
        namespace=namespace,
        num_workers=1,
        head_cpu_requests=1,
        head_cpu_limits=1,
        head_memory_requests=2,
        head_memory_limits=2,
        local_queue=local_queue,
    )


def test_job_with_its_own_queued_cluster_succeeds(backend: Backend, namespace: str) -> None:
    backend.queues(namespace)
    job = RayJob(
        "hello",
        "python -c 'print(1)'",
        namespace=namespace,
        cluster_config=_cluster("unused", namespace),
        client=backend.client(namespace),
    ).submit()
    status = job.wait(timeout=backend.timeout, poll=backend.poll, progress=False)
    assert status.succeeded
    assert (status.deployment_status, status.job_status) == ("Complete", "SUCCEEDED")
    assert status.local_queue == "lq"
    assert status.cluster_name is not None and status.cluster_name.startswith("hello-")
    assert status.job_id
    # The job's cluster is shut down once the job has finished.
    backend.wait(
        lambda: backend.get("rayclusters", str(status.cluster_name), namespace) is None,
        "the job's cluster to be deleted",
    )


def test_job_on_an_existing_cluster_succeeds_and_leaves_the_cluster(
    backend: Backend, namespace: str
) -> None:
    client = backend.client(namespace)
    cluster = Cluster(_cluster("shared", namespace, local_queue=None), client)
    backend.queues(namespace)  # Kueue is installed: a cluster outside a queue is a choice
    cluster.config.local_queue = "lq"
    cluster.apply()
    cluster.wait_ready(timeout=backend.timeout, poll=backend.poll, progress=False)
    job = RayJob(
        "on-shared", "python job.py", namespace=namespace, cluster_name="shared", client=client
    ).submit()
    status = job.wait(timeout=backend.timeout, poll=backend.poll, progress=False)
    assert status.succeeded and status.cluster_name == "shared"
    assert backend.get("rayclusters", "shared", namespace) is not None
    assert job.delete()
    cluster.down(wait=True, timeout=backend.timeout, poll=backend.poll, progress=False)


def test_job_whose_entrypoint_fails_reports_the_failure(backend: Backend, namespace: str) -> None:
    backend.queues(namespace)
    job = RayJob(
        "broken",
        "python fail.py",
        namespace=namespace,
        cluster_config=_cluster("unused", namespace),
        runtime_env={"env_vars": {EXIT_CODE_ENV: "3"}},
        client=backend.client(namespace),
    ).submit()
    with pytest.raises(TerminalFailure):
        job.wait(timeout=backend.timeout, poll=backend.poll, progress=False)
    status = job.status()
    assert status.failed and status.job_status == "FAILED"
    assert status.deployment_status == "Failed"


def test_queued_job_is_stopped_and_resumed_through_its_workload(
    backend: Backend, namespace: str
) -> None:
    backend.queues(namespace)
    job = RayJob(
        "pausable",
        "python long.py",
        namespace=namespace,
        cluster_config=_cluster("unused", namespace),
        runtime_env={"env_vars": {"FLAREKIT_SIMULATED_DURATION": "600s"}},
        client=backend.client(namespace),
    ).submit()
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
