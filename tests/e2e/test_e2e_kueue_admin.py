"""Kueue administration through Kueue's own validation: `apply_all` sets up queues Kueue
accepts and reports as active; what Kueue refuses (in its validating webhooks or its CRDs'
rules), flarekit refuses first, naming the parameter, before any request is sent.

The same objects written raw show that Kueue does refuse them, on the control plane: there
Kueue's webhooks and the API server's CEL rules check them. FakeCluster runs neither (see
docs/fakecluster.md), so there the raw objects are stored: that difference is asserted too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from e2e_support import Backend

from flarekit import Client
from flarekit.kueue import (
    ClusterQueueSpec,
    ConfigError,
    LocalQueueSpec,
    Quota,
    ResourceFlavorSpec,
    WorkloadPriorityClassSpec,
    apply_all,
    queue_status,
)
from flarekit_testing import ApiError
from kube_support import writes

JSON = dict[str, Any]


def _cq(name: str, quota: JSON, cohort: str | None = None) -> JSON:
    spec: JSON = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [{"name": "e2e-flavor", "resources": [{"name": "cpu", **quota}]}],
            }
        ],
    }
    if cohort:
        spec["cohort"] = cohort
    return {"kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


@dataclass(frozen=True)
class Refused:
    """Something Kueue refuses: how a user asks for it through flarekit, the parameter
    flarekit names, the object written raw, and words of Kueue's refusal."""

    spec: Callable[[], Any]
    field: str
    raw: JSON
    kueue_says: str


CASES = {
    "borrowing limit without a cohort": Refused(
        lambda: ClusterQueueSpec("e2e-bad", {"e2e-flavor": {"cpu": Quota(4, borrowing_limit=2)}}),
        "flavors['e2e-flavor']['cpu']",
        _cq("e2e-bad", {"nominalQuota": "4", "borrowingLimit": "2"}),
        "borrowingLimit must be nil when cohort is empty",
    ),
    "lending more than the quota": Refused(
        lambda: ClusterQueueSpec(
            "e2e-bad", {"e2e-flavor": {"cpu": Quota(4, lending_limit=8)}}, cohort="team"
        ),
        "flavors['e2e-flavor']['cpu'].lending_limit",
        _cq("e2e-bad", {"nominalQuota": "4", "lendingLimit": "8"}, cohort="team"),
        "must be less than or equal to the nominalQuota",
    ),
    "a node label key that is no label key": Refused(
        lambda: ResourceFlavorSpec("e2e-bad", node_labels={"bad key!": "a100"}),
        "node_labels['bad key!']",
        {
            "kind": "ResourceFlavor",
            "metadata": {"name": "e2e-bad"},
            "spec": {"nodeLabels": {"bad key!": "a100"}},
        },
        "name part must consist of alphanumeric characters",
    ),
}


def _setup(namespace: str, cluster_queue: str = "e2e-cq") -> list[Any]:
    return [
        ResourceFlavorSpec("e2e-flavor", node_labels={"flarekit.dev/simulated-node": "true"}),
        WorkloadPriorityClassSpec("e2e-high", 1000, description="urgent work"),
        ClusterQueueSpec(
            cluster_queue,
            {"e2e-flavor": {"cpu": Quota(8, borrowing_limit=4, lending_limit=2), "memory": "32Gi"}},
            cohort="e2e-team",
        ),
        LocalQueueSpec("e2e-lq", namespace, cluster_queue),
    ]


def test_setup_is_accepted_applied_once_and_reported(
    backend: Backend, namespace: str, client: Client
) -> None:
    stored = apply_all(client, _setup(namespace))
    assert [s.kind for s in stored] == [
        "ResourceFlavor", "WorkloadPriorityClass", "ClusterQueue", "LocalQueue"
    ]  # fmt: skip
    cq = backend.get("clusterqueues", "e2e-cq") or {}
    [group] = cq["spec"]["resourceGroups"]
    [flavor] = group["flavors"]
    assert {r["name"]: r.get("lendingLimit") for r in flavor["resources"]}["cpu"] == "2"
    # Kueue reports the queues usable.
    status = backend.wait(
        lambda: (s := queue_status(client, "e2e-lq", namespace)) and s.active and s, "active"
    )
    assert status.cluster_queue == "e2e-cq"
    # Applying the same again changes nothing.
    backend.cluster.clear_requests()
    apply_all(client, _setup(namespace))
    assert (backend.get("clusterqueues", "e2e-cq") or {})["metadata"]["generation"] == cq[
        "metadata"
    ]["generation"]


def test_a_local_queue_cannot_change_its_cluster_queue(
    backend: Backend, namespace: str, client: Client
) -> None:
    apply_all(client, _setup(namespace))
    apply_all(client, [ClusterQueueSpec("e2e-other", {"e2e-flavor": {"cpu": 1, "memory": "1Gi"}})])
    backend.cluster.clear_requests()
    with pytest.raises(ConfigError) as info:
        apply_all(client, [LocalQueueSpec("e2e-lq", namespace, "e2e-other")])
    assert info.value.fields == ["LocalQueue 'e2e-lq': cluster_queue"]
    assert "'e2e-cq'" in str(info.value)
    assert writes(backend.cluster) == 0
    raw = {"spec": {"clusterQueue": "e2e-other"}}
    if backend.real:
        with pytest.raises(ApiError, match=r"spec\.clusterQueue.*field is immutable"):
            backend.cluster.patch("localqueues", "e2e-lq", raw, namespace)
    else:  # FakeCluster does not run the CRD's CEL rules (docs/fakecluster.md)
        backend.cluster.patch("localqueues", "e2e-lq", raw, namespace)


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_kueue_refuses_flarekit_refuses_first(
    backend: Backend, namespace: str, client: Client, case: str
) -> None:
    refused = CASES[case]
    apply_all(client, _setup(namespace)[:1])  # the flavor the queues name
    backend.cluster.clear_requests()
    with pytest.raises(ConfigError) as info:
        apply_all(client, [refused.spec()])
    assert info.value.fields == [refused.field]
    assert writes(backend.cluster) == 0
    raw = {"apiVersion": backend.kueue_api(), **refused.raw}
    if backend.real:
        with pytest.raises(ApiError, match=refused.kueue_says):
            backend.cluster.create(raw)
    else:  # no Kueue webhooks and no CEL rules on FakeCluster (docs/fakecluster.md)
        backend.cluster.create(raw)
        backend.cluster.delete(raw["kind"].lower() + "s", "e2e-bad")


@pytest.fixture(autouse=True)
def _cluster_scoped_objects_go(backend: Backend) -> Any:
    """The flavors, queues and priority classes are cluster-wide: remove them after each
    test, as an admin would, so that the next test starts from none. Kueue's finalizers
    keep a deleted flavor or queue a while: the next test starts once they are gone (an apply
    meanwhile would land on an object about to vanish)."""
    yield
    resources = ("clusterqueues", "resourceflavors", "workloadpriorityclasses")

    def ours(resource: str) -> list[str]:
        names = (obj["metadata"]["name"] for obj in backend.objects(resource))
        return [name for name in names if name.startswith("e2e-")]

    for resource in resources:
        for name in ours(resource):
            backend.cluster.delete(resource, name)
    backend.wait(lambda: not any(ours(r) for r in resources), "the e2e queues to be gone")
