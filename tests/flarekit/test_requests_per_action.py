"""The requests each facade action sends, on FakeCluster and on the real API server.

Each list is the fewest requests the action needs; a change that sends more (a second GET of
the same object, discovery asked twice) fails here, naming the extra request. The server's
facts are learnt once per client: aggregated discovery (``GET /apis``: every group, version
and kind in one answer) on the first action; CRDs only when an object sets a field some
pinned releases lack. The first actions run on both servers (`backend`: a FakeCluster, then
the session's real control plane, which runs no operators: what is counted here is sent
before any operator acts). What follows an operator's work (waiting until ready, a job's
status) runs on a FakeCluster with simulated operators.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flarekit import Client
from flarekit.cluster import Cluster, ClusterConfiguration
from flarekit.job import JobState, RayJob, TrainJob
from flarekit.kueue import ClusterQueueSpec, LocalQueueSpec, ResourceFlavorSpec, apply_all
from flarekit_testing import (
    ClusterBackend,
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from kube_support import client_for, new_namespace, seed_queues
from wait_support import wait_until

RELEASES = {"kuberay": "v1.7.0", "kueue": "v0.19.2", "trainer": "v2.3.0", "jobset": "v0.12.0"}
NS = "team"
KUEUE = "kueue.x-k8s.io/v1beta2"
RAY = f"/apis/ray.io/v1/namespaces/{NS}"
TRAINER = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}"
#: Waiting until the job is in any state at all returns after exactly one poll.
ANY_STATE = tuple(JobState)
DISCOVERY = "GET /apis"


def _runtime() -> dict[str, Any]:
    node = {"spec": {"template": {"spec": {"containers": [{"name": "node", "image": "t:1"}]}}}}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch", "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {"spec": {"replicatedJobs": [{"name": "node", "template": node}]}},
        },
    }


def sent(server: ClusterBackend, action: Callable[[], object]) -> list[str]:
    """``METHOD path`` of every request `action` made."""
    before = len(server.requests)
    action()
    return [f"{r.method} {r.path}" for r in server.requests[before:]]


# -- the first actions of a client, on both servers ---------------------------------------------


@pytest.fixture
def seeded(backend: ClusterBackend) -> Iterator[tuple[ClusterBackend, str]]:
    """The server, with a fresh namespace holding LocalQueue ``lq`` (and its ClusterQueue),
    and Trainer's ``torch`` runtime."""
    namespace = new_namespace(backend, "requests")
    seed_queues(backend, namespace, cluster_queue_name=f"{namespace}-cq", flavor=f"{namespace}-f")
    if backend.get("clustertrainingruntimes", "torch") is None:
        backend.create(_runtime())
    yield backend, namespace


def test_first_and_warm_cluster_apply(seeded: tuple[ClusterBackend, str]) -> None:
    server, ns = seeded
    rc = f"/apis/ray.io/v1/namespaces/{ns}/rayclusters/rc"
    with client_for(server, namespace=ns) as client:
        config = ClusterConfiguration("rc", namespace=ns, num_workers=1, local_queue="lq")
        cluster = Cluster(config, client=client)
        assert sent(server, cluster.apply) == [
            DISCOVERY,  # which versions are served (Kueue's, KubeRay's): once per client
            f"GET /apis/{KUEUE}/namespaces/{ns}/localqueues/lq",  # the queue must exist
            f"GET {rc}",  # the name must not be taken by a wrapped cluster
            f"PATCH {rc}",
        ]
        assert sent(server, cluster.apply) == [  # warm: its queue was checked by the last one
            f"GET {rc}",
            f"PATCH {rc}",
        ]


def test_first_trainjob_submit(seeded: tuple[ClusterBackend, str]) -> None:
    server, ns = seeded
    with client_for(server, namespace=ns) as client:
        job = TrainJob(
            "tj",
            runtime="torch",
            image="example.com/train:1",
            command=["python", "-c", "1"],
            namespace=ns,
            local_queue="lq",
            client=client,
        )
        assert sent(server, job.submit) == [
            "GET /apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch",
            DISCOVERY,
            f"GET /apis/{KUEUE}/namespaces/{ns}/localqueues/lq",
            f"POST /apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs",
        ]


def test_first_rayjob_submit(seeded: tuple[ClusterBackend, str]) -> None:
    server, ns = seeded
    with client_for(server, namespace=ns) as client:
        job = RayJob(
            "rj",
            entrypoint="python -c 1",
            namespace=ns,
            cluster_config=ClusterConfiguration("x", num_workers=1),
            local_queue="lq",
            client=client,
        )
        assert sent(server, job.submit) == [
            DISCOVERY,
            f"GET /apis/{KUEUE}/namespaces/{ns}/localqueues/lq",
            f"POST /apis/ray.io/v1/namespaces/{ns}/rayjobs",
        ]


def test_apply_all_of_a_flavor_a_cluster_queue_and_a_local_queue(
    seeded: tuple[ClusterBackend, str],
) -> None:
    server, ns = seeded
    flavor, cq = f"{ns}-flavor2", f"{ns}-cq2"
    specs = [
        ResourceFlavorSpec(flavor),
        ClusterQueueSpec(cq, {flavor: {"cpu": "4"}}),
        LocalQueueSpec("lq2", ns, cq),
    ]
    kueue = f"/apis/{KUEUE}"
    paths = [f"{kueue}/resourceflavors/{flavor}", f"{kueue}/clusterqueues/{cq}"]
    paths.append(f"{kueue}/namespaces/{ns}/localqueues/lq2")
    with client_for(server, namespace=ns) as client:
        assert sent(server, lambda: apply_all(client, specs)) == [
            DISCOVERY,
            # Each object read once: does it exist, and is another call creating it (then
            # this one takes it over)? Only what this call creates is removed on a failure.
            *(f"GET {path}" for path in paths),
            *(f"PATCH {path}" for path in paths),  # applied with this call's mark ...
            *(f"PATCH {path}" for path in paths),  # ... and the mark removed on success
        ]
        assert sent(server, lambda: apply_all(client, specs)) == [  # all there: no marks
            *(f"GET {path}" for path in paths),
            *(f"PATCH {path}" for path in paths),
        ]


def test_a_configuration_is_validated_once_from_construction_to_write(
    seeded: tuple[ClusterBackend, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from flarekit.cluster import _config

    server, ns = seeded
    calls: list[object] = []
    original = _config.validate

    def counting(config: Any) -> Any:
        calls.append(config)
        return original(config)

    monkeypatch.setattr(_config, "validate", counting)
    with client_for(server, namespace=ns) as client:
        config = ClusterConfiguration("once", namespace=ns, num_workers=1, local_queue="lq")
        Cluster(config, client=client).apply()
        assert len(calls) == 1  # on construction; apply() sees it unchanged
        config.num_workers = 2  # changed after construction: checked again, once
        Cluster(config, client=client).apply()
        assert len(calls) == 2


# -- what follows, with simulated operators -----------------------------------------------------


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    controllers = [
        KueueController(),
        RayClusterController(ready_after=0.0),
        RayJobController(),
        TrainJobController(run_for=60),
    ]
    with FakeCluster(releases=RELEASES, tick_interval=0.02, controllers=controllers) as cluster:
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        seed_queues(cluster, NS)
        cluster.create(_runtime())
        yield cluster


@pytest.fixture
def client(fc: FakeCluster) -> Iterator[Client]:
    """A new client per test."""
    with client_for(fc, namespace=NS) as c:
        yield c


def test_cluster_apply_status_wait_down(fc: FakeCluster, client: Client) -> None:
    cluster = Cluster(
        ClusterConfiguration("rc", namespace=NS, num_workers=1, local_queue="lq"), client=client
    )
    cluster.apply()
    assert sent(fc, cluster.status) == [f"GET {RAY}/rayclusters/rc"]
    # (No status yet until the simulated operator's first pass: not ready.)
    wait_until(
        lambda: fc.get("rayclusters", "rc", NS).get("status", {}).get("state") == "ready",
        "the simulated operator makes the cluster ready",
    )
    assert sent(fc, lambda: cluster.wait_ready(poll=0.01, progress=False)) == [
        f"GET {RAY}/rayclusters/rc",  # one poll: ready
        # Is the dashboard exposed (then it is waited for)? The head Service's name, then
        # what may route to it: nothing here, so it is asked for once through the API
        # server's proxy to the head Service, which this server does not offer (404): there
        # is no dashboard to wait for. One lookup serves every step.
        f"GET {RAY}/rayclusters/rc",
        f"GET /apis/route.openshift.io/v1/namespaces/{NS}/routes",
        f"GET /apis/networking.k8s.io/v1/namespaces/{NS}/ingresses",
        f"GET /apis/gateway.networking.k8s.io/v1/namespaces/{NS}/httproutes",
        f"GET /api/v1/namespaces/{NS}/services/rc-head-svc:8265/proxy/api/version",
    ]
    assert sent(
        fc, lambda: cluster.wait_ready(poll=0.01, progress=False, dashboard_check=False)
    ) == [f"GET {RAY}/rayclusters/rc"]
    assert sent(fc, cluster.down) == [
        f"GET {RAY}/rayclusters/rc",  # owned by an AppWrapper? then that is deleted
        f"DELETE {RAY}/rayclusters/rc",
    ]


def test_rayjob_submit_status(fc: FakeCluster, client: Client) -> None:
    job = RayJob(
        "rj",
        entrypoint="python -c 1",
        namespace=NS,
        cluster_config=ClusterConfiguration("x", num_workers=1),
        local_queue="lq",
        client=client,
    )
    job.submit()
    # Running or done: a job still suspended (Kueue has not admitted it yet) becomes pending
    # next, and a pending job's status reads its pods and events too.
    wait_until(
        lambda: job._read_status().state in (JobState.RUNNING, JobState.SUCCEEDED),
        "the job runs or has run",
    )
    assert sent(fc, job.status) == [f"GET {RAY}/rayjobs/rj"]
    assert sent(fc, lambda: job.wait(until=ANY_STATE, timeout=0, progress=False)) == [
        f"GET {RAY}/rayjobs/rj"  # one poll
    ]
    job.delete()


def test_trainjob_submit_status(fc: FakeCluster, client: Client) -> None:
    job = TrainJob(
        "tj",
        runtime="torch",
        image="example.com/train:1",
        command=["python", "-c", "1"],
        namespace=NS,
        local_queue="lq",
        client=client,
    )
    job.submit()
    # A pending job's status also reads its pods' and its events; once running, one GET.
    wait_until(lambda: job._read_status().state is JobState.RUNNING, "the job runs")
    assert sent(fc, job.status) == [f"GET {TRAINER}/trainjobs/tj"]
    assert sent(fc, lambda: job.wait(until=ANY_STATE, timeout=0, progress=False)) == [
        f"GET {TRAINER}/trainjobs/tj"  # one poll
    ]
    job.delete()
