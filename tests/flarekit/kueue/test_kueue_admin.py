"""Kueue admin objects: validated before any request, rendered for v1beta1 and v1beta2,
applied idempotently in dependency order, and rolled back when a setup fails halfway."""

from __future__ import annotations

from typing import Any

import pytest

from flarekit import Client, Invalid, ServerError
from flarekit.kueue import (
    AdminSpec,
    ClusterQueueSpec,
    ConfigError,
    LocalQueueSpec,
    Quota,
    ResourceFlavorSpec,
    WorkloadPriorityClassSpec,
    apply_all,
    apply_cluster_queue,
    apply_local_queue,
    apply_resource_flavor,
    apply_workload_priority_class,
    resolve_local_queue,
)
from flarekit_testing import FakeCluster
from kube_support import writes

QUOTAS: dict[str, dict[str, Any]] = {
    "default-flavor": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 2}
}


def _version(fc: FakeCluster) -> str:
    return fc.resource("clusterqueues").storage_version


# -- validation (offline) -------------------------------------------------------------------


def test_cluster_queue_problems_are_reported_together_by_field() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterQueueSpec(
            "Team_Queue",
            {
                "gpu nodes": {"cpu": "lots"},
                "default": {"memory": "8Gb", "nvidia.com/gpu": -1, "bad key!": 1},
            },
            reclaim_within_cohort="Sometimes",
            namespace_selector={"team": "a b"},
        )
    fields = info.value.fields
    assert fields == [
        "name",
        "reclaim_within_cohort",
        "namespace_selector['team']",
        "flavors['gpu nodes']",
        "flavors['gpu nodes']['cpu']",
        "flavors['default']['memory']",
        "flavors['default']['nvidia.com/gpu']",
        "flavors['default']['bad key!']",
    ]
    text = str(info.value)
    assert "'8Gb'" in text and "did you mean '8Gi'" in text
    assert "'Never', 'LowerPriority', 'Any'" in text


def test_memory_without_unit_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterQueueSpec("cq", {"f": {"cpu": 8, "memory": 32}})
    assert info.value.fields == ["flavors['f']['memory']"]
    assert "'32Gi'" in str(info.value)


def test_quota_limits_need_a_cohort_and_lending_at_most_nominal() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterQueueSpec("cq", {"f": {"cpu": Quota(4, borrowing_limit=2, lending_limit=8)}})
    assert info.value.fields == ["flavors['f']['cpu']", "flavors['f']['cpu'].lending_limit"]
    ok = ClusterQueueSpec(
        "cq", {"f": {"cpu": Quota(4, borrowing_limit=2, lending_limit=1)}}, cohort="all"
    )
    (resource,) = ok.to_dict("v1beta2")["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert resource == {
        "name": "cpu",
        "nominalQuota": "4",
        "borrowingLimit": "2",
        "lendingLimit": "1",
    }


def test_flavors_sharing_a_resource_form_one_group_missing_quota_is_zero() -> None:
    cq = ClusterQueueSpec(
        "cq",
        {
            "a100": {"cpu": 32, "nvidia.com/gpu": 8},
            "disk": {"ephemeral-storage": "1Ti"},
            "cpu-only": {"memory": "64Gi", "cpu": 16},
        },
    )
    groups = cq.to_dict()["spec"]["resourceGroups"]
    assert [(g["coveredResources"], [f["name"] for f in g["flavors"]]) for g in groups] == [
        (["cpu", "nvidia.com/gpu", "memory"], ["a100", "cpu-only"]),
        (["ephemeral-storage"], ["disk"]),
    ]
    quotas = [
        [(r["name"], r["nominalQuota"]) for r in f["resources"]] for f in groups[0]["flavors"]
    ]
    assert quotas == [
        [("cpu", "32"), ("nvidia.com/gpu", "8"), ("memory", "0")],
        [("cpu", "16"), ("nvidia.com/gpu", "0"), ("memory", "64Gi")],
    ]


def test_no_flavors_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterQueueSpec("cq", {})
    assert info.value.fields == ["flavors"]


def test_other_specs_name_their_fields() -> None:
    with pytest.raises(ConfigError) as info:
        ResourceFlavorSpec("gpu", {"a": "b c"}, tolerations=[{"tolerationSeconds": "x"}])
    assert info.value.fields == ["node_labels['a']", "tolerations[0].tolerationSeconds"]
    with pytest.raises(ConfigError) as info:
        LocalQueueSpec("Q", "My-NS", "cq")
    assert info.value.fields == ["name", "namespace"]
    with pytest.raises(ConfigError) as info:
        WorkloadPriorityClassSpec("high", 2**31)
    assert info.value.fields == ["value"]
    with pytest.raises(ConfigError) as info:
        WorkloadPriorityClassSpec("high", "100")  # type: ignore[arg-type]
    assert info.value.fields == ["value"]


def test_invalid_input_sends_no_request(fc: FakeCluster, client: Client) -> None:
    fc.clear_requests()
    with pytest.raises(ConfigError):
        apply_cluster_queue(client, "cq", {"f": {"nvidia.com/gpu": -1}})
    with pytest.raises(ConfigError):
        apply_workload_priority_class(client, "p", -(2**40))
    with pytest.raises(ConfigError):
        apply_all(client, ["not a spec"])  # type: ignore[list-item]
    assert fc.requests == []


# -- rendering ------------------------------------------------------------------------------


def _setup(namespace: str = "team-a") -> list[Any]:
    return [
        LocalQueueSpec("lq", namespace, "cq", default=True),
        ClusterQueueSpec(
            "cq",
            {
                "a100": {"cpu": 32, "memory": "256Gi", "nvidia.com/gpu": 8},
                "cpu-only": {"cpu": 0.5, "memory": "2Gi"},
                "spot": {"cpu": 16, "memory": "64Gi"},
            },
            cohort="research",
            namespace_selector={"matchExpressions": [{"key": "team", "operator": "Exists"}]},
            reclaim_within_cohort="Any",
            within_cluster_queue="LowerPriority",
            borrow_within_cohort="LowerPriority",
            queueing_strategy="StrictFIFO",
        ),
        ResourceFlavorSpec(
            "a100",
            {"gpu": "a100"},
            node_taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}],
            tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        ),
        ResourceFlavorSpec("cpu-only"),
        ResourceFlavorSpec("spot", {"spot": "true"}),
        WorkloadPriorityClassSpec("high", 1000, "before everyone else"),
    ]


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_cluster_queue_renders_for_each_version(version: Any) -> None:
    cq = _setup()[1]
    body = cq.to_dict(version)
    spec = body["spec"]
    assert body["apiVersion"] == f"kueue.x-k8s.io/{version}"
    # v1beta2 renamed the cohort field; the rest kept its JSON shape
    assert spec.get("cohortName" if version == "v1beta2" else "cohort") == "research"
    assert ("cohort" in spec) == (version == "v1beta1")
    (group,) = spec["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    assert [f["name"] for f in group["flavors"]] == ["a100", "cpu-only", "spot"]
    assert group["flavors"][1]["resources"] == [
        {"name": "cpu", "nominalQuota": "500m"},
        {"name": "memory", "nominalQuota": "2Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": "0"},
    ]
    assert spec["preemption"] == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }
    model = cq.render(version)
    assert type(model).__module__.startswith(f"flarekit_models.kueue.{version}")
    assert model.to_dict() == body


def test_namespace_selector_forms() -> None:
    every = ClusterQueueSpec("cq", QUOTAS).to_dict()["spec"]["namespaceSelector"]
    labels = ClusterQueueSpec("cq", QUOTAS, namespace_selector={"team": "ml"}).to_dict()
    assert every == {}  # every namespace; Kueue reads a missing selector as none
    assert labels["spec"]["namespaceSelector"] == {"matchLabels": {"team": "ml"}}


def test_yaml_renders_offline() -> None:
    text = _setup()[0].to_yaml("v1beta1")
    assert "kind: LocalQueue" in text and "kueue.x-k8s.io/default-queue: 'true'" in text
    with pytest.raises(ValueError, match="'v1beta2', 'v1beta1'"):
        _setup()[0].to_dict("v1")


# -- applying -------------------------------------------------------------------------------


def test_setup_is_applied_in_order_and_idempotent(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.clear_requests()
    applied = apply_all(client, _setup(ns))
    version = _version(fc)
    assert [type(o).__name__ for o in applied] == [
        "ResourceFlavor", "ResourceFlavor", "ResourceFlavor", "WorkloadPriorityClass",
        "ClusterQueue", "LocalQueue",
    ]  # fmt: skip
    assert all(o.api_version == f"kueue.x-k8s.io/{version}" for o in applied)  # type: ignore[attr-defined]
    patches = [r.path for r in fc.requests if r.method == "PATCH"]
    assert patches[-1] == f"/apis/kueue.x-k8s.io/{version}/namespaces/{ns}/localqueues/lq"
    stored = fc.get("clusterqueues", "cq") or {}
    cohort = "cohortName" if version == "v1beta2" else "cohort"
    assert stored["spec"][cohort] == "research"
    assert stored["spec"]["queueingStrategy"] == "StrictFIFO"
    assert (fc.get("resourceflavors", "a100") or {})["spec"]["nodeLabels"] == {"gpu": "a100"}
    assert (fc.get("workloadpriorityclasses", "high") or {})["value"] == 1000
    assert resolve_local_queue(client, ns) == "lq"  # marked as the namespace's default

    versions = [o.metadata.resource_version for o in applied]  # type: ignore[attr-defined]
    again = apply_all(client, _setup(ns))
    assert [o.metadata.resource_version for o in again] == versions  # type: ignore[attr-defined]


def test_update_changes_quota(fc: FakeCluster, client: Client) -> None:
    apply_resource_flavor(client, "default-flavor")
    apply_cluster_queue(client, "small", {"default-flavor": {"cpu": 2}})
    apply_cluster_queue(client, "small", {"default-flavor": {"cpu": 4}}, cohort="pool")
    stored = fc.get("clusterqueues", "small") or {}
    flavor = stored["spec"]["resourceGroups"][0]["flavors"][0]
    assert flavor["resources"] == [{"name": "cpu", "nominalQuota": "4"}]
    assert stored["metadata"]["generation"] == 2


def test_dangling_references_are_refused_before_any_write(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.clear_requests()
    with pytest.raises(ConfigError) as info:
        apply_all(
            client,
            [
                ClusterQueueSpec("orphan", {"no-such-flavor": {"cpu": 1}}),
                LocalQueueSpec("lq", ns, "no-such-cq"),
            ],
        )
    assert info.value.fields == [
        "ClusterQueue 'orphan': flavors['no-such-flavor']",
        "LocalQueue 'lq': cluster_queue",
    ]
    assert writes(fc) == 0
    with pytest.raises(ConfigError):
        apply_local_queue(client, "lq", "no-such-cq", namespace=ns)
    assert writes(fc) == 0


def test_a_local_queue_keeps_its_cluster_queue(fc: FakeCluster, client: Client, ns: str) -> None:
    """Kueue makes `spec.clusterQueue` immutable: asked to point an existing LocalQueue at
    another ClusterQueue, flarekit refuses before writing, naming both."""
    apply_all(
        client,
        [
            ResourceFlavorSpec("default-flavor"),
            ClusterQueueSpec("cq-a", QUOTAS),
            ClusterQueueSpec("cq-b", QUOTAS),
            LocalQueueSpec("lq", ns, "cq-a"),
        ],
    )
    fc.clear_requests()
    with pytest.raises(ConfigError) as info:
        apply_all(client, [LocalQueueSpec("lq", ns, "cq-b")])
    assert info.value.fields == ["LocalQueue 'lq': cluster_queue"]
    assert "'cq-a'" in str(info.value) and "delete the LocalQueue first" in str(info.value)
    assert writes(fc) == 0
    apply_all(client, [LocalQueueSpec("lq", ns, "cq-a")])  # the same queue is fine


def test_duplicate_specs_are_refused(client: Client) -> None:
    with pytest.raises(ConfigError) as info:
        apply_all(client, [ResourceFlavorSpec("a"), ResourceFlavorSpec("a")])
    assert info.value.fields == ["specs[1]"]


def test_failed_setup_removes_what_it_created(fc: FakeCluster, client: Client, ns: str) -> None:
    apply_resource_flavor(client, "kept-flavor")
    specs: list[AdminSpec] = [
        ResourceFlavorSpec("kept-flavor", {"updated": "yes"}),
        ResourceFlavorSpec("new-flavor"),
        ClusterQueueSpec("rollback-cq", {"new-flavor": {"cpu": 1}}),
        LocalQueueSpec("rollback-lq", ns, "rollback-cq"),
    ]
    fc.inject(lambda r: r.path.endswith("/localqueues/rollback-lq"), status=500, times=None)
    try:
        with pytest.raises(ServerError):
            apply_all(client, specs)
    finally:
        fc.clear_faults()
    assert fc.get("clusterqueues", "rollback-cq") is None
    assert fc.get("resourceflavors", "new-flavor") is None
    assert fc.get("resourceflavors", "kept-flavor") is not None  # existed before: kept


def test_server_rejection_of_a_namespace_that_does_not_exist_rolls_back(
    fc: FakeCluster, client: Client
) -> None:
    specs: list[AdminSpec] = [
        ResourceFlavorSpec("ns-flavor"),
        ClusterQueueSpec("ns-cq", {"ns-flavor": {"cpu": 1}}),
    ]
    with pytest.raises(Exception) as info:
        apply_all(client, [*specs, LocalQueueSpec("lq", "no-such-namespace", "ns-cq")])
    assert not isinstance(info.value, (ConfigError, Invalid))
    assert fc.get("clusterqueues", "ns-cq") is None
    assert fc.get("resourceflavors", "ns-flavor") is None
