"""Kueue's admission decisions, the same on FakeCluster's simulated Kueue and the real one.

Each scenario sets up ResourceFlavors and ClusterQueues of its own (names carry the test's
namespace), submits RayClusters to them one after the other and reads each one's Workload:
admitted in which flavors, or pending with Kueue's reason and message. The expected outcomes
are Kueue v0.19's own words; both backends must give exactly them: a workload that fits, one
that waits for quota in use (and is admitted once that is freed), one that fits only by
borrowing from its cohort, one whose cohort lends too little (lending limits), one that
exceeds what its queue could ever hold, one asking for a resource its queue does not cover,
and ones that land in a second flavor (the first too small, or its node labels not matching
the pod's node selector).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from e2e_support import Backend

from kube_support import QUEUE_LABEL

JSON = dict[str, Any]
POOL = "flarekit.dev/pool"


@dataclass(frozen=True)
class Outcome:
    """What Kueue decided: the flavors of each pod set when admitted, else why not."""

    admitted: bool
    flavors: Mapping[str, Mapping[str, str]] | None = None
    message: str = ""


class Kueue:
    """Queues and RayClusters of one test, removed afterwards."""

    def __init__(self, backend: Backend, namespace: str) -> None:
        self.backend, self.namespace = backend, namespace
        self.api = backend.kueue_api()
        self.made: list[tuple[str, str]] = []

    def name(self, short: str) -> str:
        return f"{self.namespace}-{short}"

    def flavor(self, short: str, labels: Mapping[str, str] | None = None) -> str:
        name = self.name(short)
        spec: JSON = {"nodeLabels": dict(labels)} if labels else {}
        self._create({"kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec})
        self.made.append(("resourceflavors", name))
        return name

    def queue(
        self,
        short: str,
        flavors: list[tuple[str, JSON]],
        covered: tuple[str, ...] = ("cpu",),
        cohort: str | None = None,
    ) -> str:
        """ClusterQueue `short` with `flavors` in order, each (flavor, {resource: quota
        fields}), and LocalQueue `short` in the test's namespace pointing to it."""
        name = self.name(short)
        group = {
            "coveredResources": list(covered),
            "flavors": [
                {"name": f, "resources": [{"name": r, **q} for r, q in quota.items()]}
                for f, quota in flavors
            ],
        }
        spec: JSON = {"namespaceSelector": {}, "resourceGroups": [group]}
        if cohort is not None:
            spec["cohortName" if self.api.endswith("v1beta2") else "cohort"] = self.name(cohort)
        self._create({"kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec})
        self.made.append(("clusterqueues", name))
        self._create(
            {
                "kind": "LocalQueue",
                "metadata": {"name": short, "namespace": self.namespace},
                "spec": {"clusterQueue": name},
            }
        )
        self.backend.wait(lambda: self._active(short), f"LocalQueue {short} active")
        return short

    def _active(self, local_queue: str) -> bool:
        found = self.backend.get("localqueues", local_queue, self.namespace) or {}
        conditions = (found.get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Active" and c.get("status") == "True" for c in conditions)

    def _create(self, obj: JSON) -> None:
        self.backend.cluster.create({"apiVersion": self.api, **obj})

    def submit(
        self, name: str, queue: str, requests: Mapping[str, str], node_selector: JSON | None = None
    ) -> str:
        """A RayCluster of one head pod with `requests`, in LocalQueue `queue`."""
        pod: JSON = {
            "containers": [
                {"name": "ray-head", "image": "rayproject/ray:2.9.0",
                 "resources": {"requests": dict(requests), "limits": dict(requests)}}
            ]
        }  # fmt: skip
        if node_selector:
            pod["nodeSelector"] = node_selector
        self.backend.cluster.create(
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayCluster",
                "metadata": {
                    "name": name,
                    "namespace": self.namespace,
                    "labels": {QUEUE_LABEL: queue},
                },
                "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": pod}}},
            }
        )
        return name

    def workload(self, cluster: str) -> JSON | None:
        owned = self.backend.owned_by("workloads", self.namespace, cluster, "RayCluster")
        return owned[0] if owned else None

    def outcome(self, cluster: str, admitted: bool = False) -> Outcome:
        """The Workload's admission once Kueue has decided (with `admitted`, once it is
        admitted: it waited before)."""

        def decided() -> Outcome | None:
            workload = self.workload(cluster) or {}
            status = workload.get("status") or {}
            reserved = next(
                (c for c in status.get("conditions") or [] if c.get("type") == "QuotaReserved"),
                None,
            )
            if reserved is None:
                return None
            if reserved.get("status") == "True":
                return Outcome(True, self._flavors(status))
            if admitted:
                return None
            message = str(reserved.get("message") or "")
            if reserved.get("reason") != "Pending" or not message.startswith("couldn't"):
                return None  # not yet Kueue's decision on quota
            return Outcome(False, message=message)

        found: Outcome = self.backend.wait(decided, f"Kueue's decision on {cluster}")
        return found

    @staticmethod
    def _flavors(status: JSON) -> dict[str, dict[str, str]]:
        assignments = (status.get("admission") or {}).get("podSetAssignments") or []
        return {str(a["name"]): dict(a.get("flavors") or {}) for a in assignments}

    def delete_cluster(self, name: str) -> None:
        self.backend.cluster.delete("rayclusters", name, self.namespace)

    def clean(self) -> None:
        """RayClusters first (their Workloads release the quota), then the queues and flavors
        (Kueue's finalizer holds them until nothing uses them)."""
        for cluster in self.backend.objects("rayclusters", self.namespace):
            self.delete_cluster(cluster["metadata"]["name"])
        self.backend.wait(
            lambda: not self.backend.objects("workloads", self.namespace), "Workloads gone"
        )
        for resource, name in reversed(self.made):
            self.backend.cluster.delete(resource, name)
        for resource, name in self.made:
            self.backend.wait(lambda r=resource, n=name: self.backend.get(r, n) is None, name)


@pytest.fixture
def kueue(backend: Backend, namespace: str) -> Iterator[Kueue]:
    made = Kueue(backend, namespace)
    yield made
    made.clean()


def test_a_workload_that_fits_is_admitted(kueue: Kueue) -> None:
    flavor = kueue.flavor("f")
    queue = kueue.queue("q", [(flavor, {"cpu": {"nominalQuota": "4"}})])
    kueue.submit("fits", queue, {"cpu": "1"})
    assert kueue.outcome("fits") == Outcome(True, {"head": {"cpu": flavor}})


def test_a_workload_waits_for_quota_in_use(kueue: Kueue) -> None:
    flavor = kueue.flavor("f")
    queue = kueue.queue("q", [(flavor, {"cpu": {"nominalQuota": "4"}})])
    kueue.submit("first", queue, {"cpu": "3"})
    assert kueue.outcome("first").admitted
    kueue.submit("second", queue, {"cpu": "2"})
    assert kueue.outcome("second") == Outcome(
        False,
        message="couldn't assign flavors to pod set head: insufficient unused quota for cpu "
        f"in flavor {flavor}, 1 more needed",
    )
    kueue.delete_cluster("first")
    assert kueue.outcome("second", admitted=True) == Outcome(True, {"head": {"cpu": flavor}})


def test_a_workload_borrows_from_its_cohort(kueue: Kueue, backend: Backend) -> None:
    flavor = kueue.flavor("f")
    small = kueue.queue("small", [(flavor, {"cpu": {"nominalQuota": "2"}})], cohort="co")
    kueue.queue("big", [(flavor, {"cpu": {"nominalQuota": "4"}})], cohort="co")
    kueue.submit("borrower", small, {"cpu": "5"})
    assert kueue.outcome("borrower") == Outcome(True, {"head": {"cpu": flavor}})

    def borrowed() -> str | None:
        status = (backend.get("clusterqueues", kueue.name("small")) or {}).get("status") or {}
        for usage in status.get("flavorsUsage") or []:
            for resource in usage.get("resources") or []:
                if resource.get("name") == "cpu" and resource.get("total") == "5":
                    return str(resource.get("borrowed"))
        return None

    assert backend.wait(borrowed, "the ClusterQueue's usage") == "3"


def test_a_lending_limit_caps_what_the_cohort_offers(kueue: Kueue) -> None:
    flavor = kueue.flavor("f")
    small = kueue.queue("small", [(flavor, {"cpu": {"nominalQuota": "2"}})], cohort="co")
    big = {"nominalQuota": "4", "lendingLimit": "1"}
    kueue.queue("big", [(flavor, {"cpu": big})], cohort="co")
    kueue.submit("borrower", small, {"cpu": "4"})
    assert kueue.outcome("borrower") == Outcome(
        False,
        message="couldn't assign flavors to pod set head: insufficient quota for cpu in flavor "
        f"{flavor}, previously considered podsets requests (0) + current podset request (4) > "
        "maximum capacity (3)",
    )


def test_a_workload_that_exceeds_its_queue_stays_pending(kueue: Kueue) -> None:
    flavor = kueue.flavor("f")
    queue = kueue.queue("q", [(flavor, {"cpu": {"nominalQuota": "4"}})])
    kueue.submit("huge", queue, {"cpu": "16"})
    assert kueue.outcome("huge") == Outcome(
        False,
        message="couldn't assign flavors to pod set head: insufficient quota for cpu in flavor "
        f"{flavor}, previously considered podsets requests (0) + current podset request (16) "
        "> maximum capacity (4)",
    )


def test_a_resource_the_queue_does_not_cover_stays_pending(kueue: Kueue) -> None:
    flavor = kueue.flavor("f")
    queue = kueue.queue("q", [(flavor, {"cpu": {"nominalQuota": "4"}})])
    kueue.submit("gpu", queue, {"cpu": "1", "nvidia.com/gpu": "1"})
    assert kueue.outcome("gpu") == Outcome(
        False,
        message="couldn't assign flavors to pod set head: resource nvidia.com/gpu unavailable "
        "in ClusterQueue",
    )


def test_a_workload_too_big_for_the_first_flavor_gets_the_second(kueue: Kueue) -> None:
    small, big = kueue.flavor("small"), kueue.flavor("big")
    quotas = [(small, {"cpu": {"nominalQuota": "1"}}), (big, {"cpu": {"nominalQuota": "8"}})]
    queue = kueue.queue("q", quotas)
    kueue.submit("two", queue, {"cpu": "2"})
    assert kueue.outcome("two") == Outcome(True, {"head": {"cpu": big}})
    kueue.submit("ten", queue, {"cpu": "10"})
    assert kueue.outcome("ten") == Outcome(
        False,
        message="couldn't assign flavors to pod set head: insufficient quota for cpu in flavor "
        f"{big}, previously considered podsets requests (0) + current podset request (10) > "
        f"maximum capacity (8), insufficient quota for cpu in flavor {small}, previously "
        "considered podsets requests (0) + current podset request (10) > maximum capacity (1)",
    )


def test_node_labels_send_a_workload_to_the_flavor_its_selector_matches(kueue: Kueue) -> None:
    pool_a, pool_b = kueue.flavor("a", {POOL: "a"}), kueue.flavor("b", {POOL: "b"})
    quotas = [(pool_a, {"cpu": {"nominalQuota": "8"}}), (pool_b, {"cpu": {"nominalQuota": "8"}})]
    queue = kueue.queue("q", quotas)
    kueue.submit("on-b", queue, {"cpu": "1"}, node_selector={POOL: "b"})
    assert kueue.outcome("on-b") == Outcome(True, {"head": {"cpu": pool_b}})
    kueue.submit("on-c", queue, {"cpu": "1"}, node_selector={POOL: "c"})
    assert kueue.outcome("on-c") == Outcome(
        False,
        message=f"couldn't assign flavors to pod set head: flavor {pool_a} doesn't match node "
        f"affinity, flavor {pool_b} doesn't match node affinity",
    )
