"""The requests each facade action sends, on a FakeCluster with simulated operators.

Each list is the fewest requests the action needs; a change that sends more (a second GET of
the same object, discovery asked twice) fails here, naming the extra request. Negotiation
(discovery and the family's CRDs, read once per client) is listed where it happens: on the
first write of a family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flarekit import Client
from flarekit.cluster import Cluster, ClusterConfiguration
from flarekit.job import JobState, RayJob, TrainJob
from flarekit_testing import (
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from kube_support import client_for, seed_queues
from wait_support import wait_until

RELEASES = {"kuberay": "v1.7.0", "kueue": "v0.19.2", "trainer": "v2.3.0", "jobset": "v0.12.0"}
NS = "team"
KUEUE = "kueue.x-k8s.io/v1beta2"
RAY = f"/apis/ray.io/v1/namespaces/{NS}"
TRAINER = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#: Waiting until the job is in any state at all returns after exactly one poll.
ANY_STATE = tuple(JobState)
LOCAL_QUEUE = f"GET /apis/{KUEUE}/namespaces/{NS}/localqueues/lq"

KUBERAY_NEGOTIATION = [
    "GET /apis/ray.io",
    "GET /apis/ray.io/v1",
    "GET /apis/ray.io/v1alpha1",
    f"GET {CRDS}/rayclusters.ray.io",
    f"GET {CRDS}/raycronjobs.ray.io",
    f"GET {CRDS}/rayjobs.ray.io",
    f"GET {CRDS}/rayservices.ray.io",
]
TRAINER_NEGOTIATION = [
    "GET /apis/trainer.kubeflow.org",
    "GET /apis/trainer.kubeflow.org/v1alpha1",
    f"GET {CRDS}/clustertrainingruntimes.trainer.kubeflow.org",
    f"GET {CRDS}/trainingruntimes.trainer.kubeflow.org",
    f"GET {CRDS}/trainjobs.trainer.kubeflow.org",
]


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
    """A new client per test: negotiation happens in the test that writes first."""
    with client_for(fc, namespace=NS) as c:
        yield c


def sent(fc: FakeCluster, action: Callable[[], object]) -> list[str]:
    """``METHOD path`` of every request `action` made."""
    before = len(fc.requests)
    action()
    return [f"{r.method} {r.path}" for r in fc.requests[before:]]


def test_cluster_apply_status_wait_down(fc: FakeCluster, client: Client) -> None:
    cluster = Cluster(
        ClusterConfiguration("rc", namespace=NS, num_workers=1, local_queue="lq"), client=client
    )
    assert sent(fc, cluster.apply) == [
        f"GET /apis/{KUEUE.split('/')[0]}",  # which Kueue version is served
        LOCAL_QUEUE,
        f"GET {RAY}/rayclusters/rc",  # taken, and by whom?
        *KUBERAY_NEGOTIATION,
        f"PATCH {RAY}/rayclusters/rc",
    ]
    assert sent(fc, cluster.apply) == [  # warm: everything learnt is reused
        LOCAL_QUEUE,
        f"GET {RAY}/rayclusters/rc",
        f"PATCH {RAY}/rayclusters/rc",
    ]
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


def test_cluster_apply_validates_once(
    fc: FakeCluster, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flarekit.cluster import _checks

    calls: list[object] = []
    original = _checks.validate

    def counting(config: Any) -> Any:
        calls.append(config)
        return original(config)

    config = ClusterConfiguration("once", namespace=NS, num_workers=1, local_queue="lq")
    monkeypatch.setattr(_checks, "validate", counting)
    cluster = Cluster(config, client=client)
    cluster.apply()
    assert len(calls) == 1
    cluster.down()


def test_rayjob_submit_status(fc: FakeCluster, client: Client) -> None:
    job = RayJob(
        "rj",
        entrypoint="python -c 1",
        namespace=NS,
        cluster_config=ClusterConfiguration("x", num_workers=1),
        local_queue="lq",
        client=client,
    )
    assert sent(fc, job.submit) == [
        "GET /apis/kueue.x-k8s.io",
        LOCAL_QUEUE,
        *KUBERAY_NEGOTIATION,
        f"POST {RAY}/rayjobs",
    ]
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
    requests = sent(fc, job.submit)
    assert requests == [
        "GET /apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch",
        "GET /apis/kueue.x-k8s.io",
        LOCAL_QUEUE,
        *TRAINER_NEGOTIATION,
        f"POST {TRAINER}/trainjobs",
    ], requests
    # A pending job's status also reads its pods' and its events; once running, one GET.
    wait_until(lambda: job._read_status().state is JobState.RUNNING, "the job runs")
    assert sent(fc, job.status) == [f"GET {TRAINER}/trainjobs/tj"]
    assert sent(fc, lambda: job.wait(until=ANY_STATE, timeout=0, progress=False)) == [
        f"GET {TRAINER}/trainjobs/tj"  # one poll
    ]
    job.delete()
