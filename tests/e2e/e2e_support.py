"""One interface over the two backends of the end-to-end tests.

A test asks its backend for a fresh namespace, Kueue queues, a client and waits, and reads
objects back with `objects`/`get`; it never asks which backend it runs on, except to choose how
long to wait. Failure is provoked the same way on both: a container with the environment
variable `FLAREKIT_SIMULATED_EXIT_CODE` set to a non-zero number fails (KWOK ends such a pod
Failed on the control plane; the simulated controllers fail the job that carries it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypedDict

from flarekit import Client, RetryPolicy
from flarekit.cluster import ClusterConfiguration
from flarekit_testing import (
    AppWrapperController,
    ClusterBackend,
    ControlPlane,
    FakeCluster,
    KueueController,
    PyTorchJobController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from flarekit_testing.controlplane._operators import OperatorNotBuilt, find_build
from kube_support import client_for, kueue_api, new_namespace, seed_queues
from wait_support import wait_until

JSON = dict[str, Any]
OPERATORS = ("kuberay", "kueue", "jobset", "trainer", "appwrapper", "training-operator")
RUNTIME = "torch-distributed"
#: What the queues of the end-to-end tests hold: realistic amounts, which the real Kueue
#: enforces against what the jobs ask for.
QUOTA = {"cpu": "24", "memory": "96Gi", "nvidia.com/gpu": "8"}


class Waits(TypedDict):
    """The wait options of the facade's waits, on a backend's timings."""

    timeout: float
    poll: float
    progress: bool


def small_cluster(
    name: str, namespace: str, local_queue: str | None = "lq", **options: Any
) -> ClusterConfiguration:
    """A Ray cluster of a head and one worker, small enough for the nodes and the queue's
    quota (`local_queue` None: outside Kueue)."""
    return ClusterConfiguration(
        name,
        namespace=namespace,
        num_workers=1,
        head_cpu_requests=1,
        head_cpu_limits=1,
        head_memory_requests=2,
        head_memory_limits=2,
        local_queue=local_queue,
        **options,
    )


class Backend:
    """What every backend offers the tests."""

    name: str
    #: Seconds a test may wait for something an operator does, and between polls.
    timeout: float
    poll: float

    @property
    def cluster(self) -> ClusterBackend:
        raise NotImplementedError

    @property
    def real(self) -> bool:
        return self.name in ("controlplane", "kubelet")

    @property
    def runs_ray(self) -> bool:
        """Whether pods run for real here (Ray starts, a dashboard answers)."""
        return self.name == "kubelet"

    @property
    def waits(self) -> Waits:
        """``timeout=``, ``poll=`` and ``progress=`` for the facade's waits."""
        return {"timeout": self.timeout, "poll": self.poll, "progress": False}

    def client(self, namespace: str) -> Client:
        retry = RetryPolicy(attempts=3, backoff=0.05, max_backoff=0.5)
        return client_for(self.cluster, namespace=namespace, retry=retry)

    def namespace(self) -> str:
        return new_namespace(self.cluster, f"e-{self.name[:4]}-")

    def drop(self, namespace: str) -> None:
        """Delete the namespace (its objects go with it)."""
        self.cluster.delete("namespaces", namespace)

    def kueue_api(self) -> str:
        return kueue_api(self.cluster)

    def queues(self, namespace: str, *local_queues: str, cluster_queue: str = "cq") -> None:
        """ResourceFlavor and ClusterQueue `cluster_queue` (once), and LocalQueues (default:
        `lq`) in `namespace`, once Kueue can use them."""
        names = local_queues or ("lq",)
        seed_queues(self.cluster, namespace, *names, cluster_queue_name=cluster_queue, quota=QUOTA)
        self.wait(lambda: self._queues_ready(namespace, names), "queues")

    def _queues_ready(self, namespace: str, names: tuple[str, ...]) -> bool:
        return all(self.cluster.get("localqueues", n, namespace) for n in names)

    def objects(self, resource: str, namespace: str | None = None) -> list[JSON]:
        try:
            return self.cluster.objects(resource, namespace)
        except ValueError:  # not served here
            return []

    def get(self, resource: str, name: str, namespace: str | None = None) -> JSON | None:
        return self.cluster.get(resource, name, namespace)

    def wait(self, check: Callable[[], Any], what: str, timeout: float | None = None) -> Any:
        """Poll `check` until it returns something true, on this backend's timings; return
        that."""
        return wait_until(
            check, f"{what} ({self.name})", timeout=timeout or self.timeout, poll=self.poll
        )

    def owned_by(
        self, resource: str, namespace: str, owner: str, kind: str | None = None
    ) -> list[JSON]:
        """Objects of `resource` in `namespace` owned by `owner` (of `kind`, if given)."""
        return [
            o
            for o in self.objects(resource, namespace)
            if any(
                r.get("name") == owner and kind in (None, r.get("kind"))
                for r in o["metadata"].get("ownerReferences") or []
            )
        ]


def _upstream_runtimes(releases: Mapping[str, str]) -> list[JSON]:
    """Trainer's upstream ClusterTrainingRuntimes of the release in use, when it is built."""
    version = releases.get("trainer")
    if version is None:
        return []
    try:
        build = find_build("trainer", version)
    except OperatorNotBuilt:
        return []
    return [o for o in build.objects() if o.get("kind") == "ClusterTrainingRuntime"]


def _hand_written_runtime() -> JSON:
    job = {
        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "node", "image": "pytorch/pytorch:2.7.1", "command": ["torchrun"]}
                    ]
                }
            }
        },
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": RUNTIME, "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {"spec": {"replicatedJobs": [{"name": "node", "template": job}]}},
        },
    }


class FakeBackend(Backend):
    """FakeCluster with every simulated operator, on the timings of the real ones' pods."""

    name = "fakecluster"
    timeout = 20.0
    poll = 0.05

    def __init__(self, fake: FakeCluster) -> None:
        self._fake = fake

    @property
    def cluster(self) -> FakeCluster:
        return self._fake

    @classmethod
    @contextmanager
    def start(cls, releases: Mapping[str, str]) -> Iterator[FakeBackend]:
        controllers = [
            RayClusterController(),
            RayJobController(run_for=1.0, wait_for_cluster=True),
            KueueController(),
            AppWrapperController(),
            TrainJobController(run_for=1.0),
            PyTorchJobController(run_for=1.0),
        ]
        fake = FakeCluster(
            releases=dict(releases) or None, tick_interval=0.02, controllers=controllers
        )
        with fake:
            runtimes = _upstream_runtimes(releases) or [_hand_written_runtime()]
            for runtime in runtimes:
                meta = {k: v for k, v in runtime["metadata"].items() if k != "namespace"}
                fake.create({**runtime, "metadata": meta})
            yield cls(fake)


class RealBackend(Backend):
    """The control plane with the real operators; pods are KWOK's."""

    name = "controlplane"
    timeout = 180.0
    poll = 0.25

    def __init__(self, plane: ControlPlane) -> None:
        self._plane = plane

    @property
    def cluster(self) -> ControlPlane:
        return self._plane

    def namespace(self) -> str:
        name = super().namespace()
        # Pods need the namespace's default ServiceAccount, which the controller-manager
        # makes a moment later; a job's pods would otherwise be retried with a back-off.
        self.wait(lambda: self._plane.get("serviceaccounts", "default", name), "service account")
        return name

    def _queues_ready(self, namespace: str, names: tuple[str, ...]) -> bool:
        """Kueue reports a LocalQueue Active once it has seen its ClusterQueue."""
        for name in names:
            queue = self._plane.get("localqueues", name, namespace) or {}
            conditions = (queue.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Active" and c.get("status") == "True" for c in conditions):
                return False
        return True


class NodeBackend(RealBackend):
    """The control plane with the real operators and one real node: pods run in containers
    (Ray, PyTorch), so waits are as long as a Ray cluster's start on a busy machine."""

    name = "kubelet"
    timeout = 600.0
    poll = 1.0
