"""Queued jobs end to end on FakeCluster's simulated Kueue: admin setup, a RayCluster with
the queue label is admitted; its Workload is found and its pending reason surfaced; a
missing LocalQueue stops a job before anything is created."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kueue_support import KUEUE_RELEASES, raycluster_body

from flarekit import Client
from flarekit.kueue import (
    JOB_UID_LABEL,
    AdmissionState,
    ClusterQueueSpec,
    LocalQueueSpec,
    QueueNotFound,
    ResourceFlavorSpec,
    admission_state,
    apply_all,
    queue_labels,
    resolve_local_queue,
    workload_for,
)
from flarekit_models.kueue.v1beta1 import Workload as WorkloadV1beta1
from flarekit_models.kueue.v1beta2 import Workload as WorkloadV1beta2
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster, KueueController, RayClusterController
from kube_support import writes
from wait_support import wait_until

TICK = 0.02


@pytest.fixture(scope="module", params=KUEUE_RELEASES)
def setup(request: pytest.FixtureRequest) -> Iterator[tuple[FakeCluster, KueueController]]:
    kueue = KueueController(pending=True)
    with FakeCluster(
        releases={"kueue": request.param, "kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[kueue, RayClusterController()],
    ) as fc:
        yield fc, kueue


@pytest.fixture
def fc(setup: tuple[FakeCluster, KueueController]) -> FakeCluster:
    return setup[0]


def _queues(client: Client, namespace: str, cluster_queue: str = "team-cq") -> None:
    apply_all(
        client,
        [
            ResourceFlavorSpec("default-flavor"),
            ClusterQueueSpec(cluster_queue, {"default-flavor": {"cpu": 8, "memory": "32Gi"}}),
            LocalQueueSpec("default", namespace, cluster_queue),
        ],
    )


def _submit(client: Client, name: str, namespace: str, queue: str | None = None) -> RayCluster:
    """What a facade does: resolve the queue first, then create the labelled job."""
    chosen = resolve_local_queue(client, namespace, queue)
    body = raycluster_body(name, namespace, queue_labels(chosen))
    return client.create(RayCluster.model_validate(body))


def _state(client: Client, job: RayCluster) -> AdmissionState | None:
    workload = workload_for(client, job)
    return admission_state(workload) if workload is not None else None


def _await(
    client: Client, job: RayCluster, check: Callable[[AdmissionState], bool], what: str
) -> AdmissionState:
    def probe() -> AdmissionState | None:
        state = _state(client, job)
        return state if state is not None and check(state) else None

    return wait_until(probe, what)


def test_admin_setup_then_queued_job_is_admitted(
    setup: tuple[FakeCluster, KueueController], client: Client, ns: str
) -> None:
    fc, kueue = setup
    _queues(client, ns)
    job = _submit(client, "rc", ns)  # the namespace's default LocalQueue
    assert job.metadata is not None and job.metadata.labels is not None
    assert job.metadata.labels["kueue.x-k8s.io/queue-name"] == "default"

    pending = _await(client, job, lambda s: s.reason == "Pending", "the Workload waits")
    assert pending.state == "pending" and pending.pending and not pending.admitted
    assert pending.message == "Workload is waiting for admission to ClusterQueue team-cq"
    assert pending.local_queue == "default" and pending.namespace == ns

    kueue.admit("rc", ns)
    admitted = _await(client, job, lambda s: s.admitted, "the Workload is admitted")
    assert admitted.cluster_queue == "team-cq"
    assert admitted.flavors == {"cpu": "default-flavor", "memory": "default-flavor"}
    assert str(admitted).startswith("admitted in ClusterQueue team-cq")
    workload = workload_for(client, job)
    assert workload is not None
    assert workload.metadata.labels[JOB_UID_LABEL] == job.metadata.uid

    def unsuspended() -> dict[str, Any] | None:
        found = fc.get("rayclusters", "rc", ns)
        return found if found is not None and found["spec"]["suspend"] is False else None

    stored = wait_until(unsuspended, "the RayCluster is unsuspended")
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"


def test_pending_reason_names_the_missing_cluster_queue(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    apply_all(client, [ResourceFlavorSpec("default-flavor")])
    # The LocalQueue exists (so the job is accepted) but its ClusterQueue does not.
    fc.create(
        {
            "apiVersion": "kueue.x-k8s.io/" + fc.resource("localqueues").storage_version,
            "kind": "LocalQueue",
            "metadata": {"name": "orphan", "namespace": ns},
            "spec": {"clusterQueue": "gone-cq"},
        }
    )
    job = _submit(client, "waiting", ns, "orphan")
    state = _await(client, job, lambda s: s.reason == "Inadmissible", "it is inadmissible")
    assert state.state == "pending"
    assert state.message == "ClusterQueue gone-cq doesn't exist"
    assert "Inadmissible: ClusterQueue gone-cq doesn't exist" in str(state)


def test_missing_local_queue_is_an_error_before_anything_is_created(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    _queues(client, ns, "other-cq")
    fc.clear_requests()
    with pytest.raises(QueueNotFound) as info:
        _submit(client, "never", ns, "no-such-queue")
    assert info.value.fields == ["local_queue"]
    assert "'default'" in str(info.value)  # lists the queues that exist
    assert writes(fc) == 0
    assert fc.request_count("POST") == 0
    assert fc.get("rayclusters", "never", ns) is None


def test_job_without_workload(fc: FakeCluster, client: Client, ns: str) -> None:
    body = raycluster_body("plain", ns, {})
    job = client.create(RayCluster.model_validate(body))
    assert workload_for(client, job) is None
    assert workload_for(client, RayCluster.model_validate(body)) is None  # never created


# -- admission_state from conditions (both versions, no cluster) ------------------------------


def _workload(version: str, conditions: list[dict[str, Any]] | None, **status: Any) -> Any:
    body: dict[str, Any] = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {
            "queueName": "lq",
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": []}}}],
        },
    }
    if conditions is not None:
        body["status"] = {"conditions": conditions, **status}
    model = WorkloadV1beta2 if version == "v1beta2" else WorkloadV1beta1
    return model.model_validate(body)


def _cond(type_: str, status: bool, reason: str, message: str = "") -> dict[str, Any]:
    return {
        "type": type_,
        "status": "True" if status else "False",
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_admission_states(version: str) -> None:
    fresh = admission_state(_workload(version, None))
    assert (fresh.state, fresh.local_queue, fresh.cluster_queue) == ("pending", "lq", "")
    assert fresh.message == "Kueue has not looked at this Workload yet"

    reserved = admission_state(
        _workload(
            version,
            [_cond("QuotaReserved", True, "QuotaReserved", "Quota reserved in ClusterQueue cq")],
            admission={"clusterQueue": "cq", "podSetAssignments": []},
        )
    )
    assert (reserved.state, reserved.cluster_queue) == ("quota_reserved", "cq")
    assert reserved.pending

    evicted = admission_state(
        _workload(
            version,
            [
                _cond("QuotaReserved", False, "Pending", "waiting again"),
                _cond("Evicted", True, "Preempted", "Preempted to accommodate a workload"),
            ],
        )
    )
    assert (evicted.state, evicted.reason) == ("evicted", "Preempted")

    finished = admission_state(
        _workload(
            version,
            [
                _cond("Admitted", True, "Admitted"),
                _cond("Finished", True, "Failed", "Job failed"),
            ],
        )
    )
    assert (finished.state, finished.reason, finished.message) == (
        "finished",
        "Failed",
        "Job failed",
    )
    assert not finished.pending and not finished.admitted
