"""Kueue v1beta1 <-> v1beta2 on every sample, round trips, and the refusals by field path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from compat_support import assert_admitted, load, samples

from flarekit.compat import ConversionError, convert

V1BETA1 = "kueue.x-k8s.io/v1beta1"
V1BETA2 = "kueue.x-k8s.io/v1beta2"
KINDS = (
    "AdmissionCheck",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "MultiKueueCluster",
    "MultiKueueConfig",
    "ProvisioningRequestConfig",
    "ResourceFlavor",
    "Topology",
    "Workload",
    "WorkloadPriorityClass",
)
OTHER = {V1BETA1: V1BETA2, V1BETA2: V1BETA1}

#: Samples that use a field the other version lacks: file stem -> refused path.
REFUSED = {
    "kueue--site-static-examples-admin-concurrent-admission-setup-yaml--3": (
        "spec.concurrentAdmissionPolicy"
    ),
}


def _params() -> list[Any]:
    return [
        pytest.param(path, id=f"{version.split('/')[1]}-{kind}-{path.stem}")
        for version in (V1BETA1, V1BETA2)
        for kind in KINDS
        for path in samples(version, kind)
    ]


@pytest.mark.parametrize("path", _params())
def test_sample_converts_validates_and_round_trips(path: Path) -> None:
    original = load(path)
    source, target = original["apiVersion"], OTHER[original["apiVersion"]]
    if path.stem in REFUSED:
        with pytest.raises(ConversionError) as caught:
            convert(original, target)
        assert caught.value.path == REFUSED[path.stem]
        assert (caught.value.source, caught.value.target) == (
            f"{source} {original['kind']}",
            f"{target} {original['kind']}",
        )
        return
    converted = convert(original, target).to_dict()
    assert converted["apiVersion"] == target
    assert_admitted(converted)
    assert convert(converted, source).to_dict() == original


def test_every_kind_has_samples_in_both_versions_or_is_known_to_lack_them() -> None:
    missing = {
        (version, kind)
        for version in (V1BETA1, V1BETA2)
        for kind in KINDS
        if not samples(version, kind)
    }
    # Workloads are made by Kueue, not written by hand; Cohort v1beta1 examples do not exist.
    assert missing <= {(V1BETA1, "Workload"), (V1BETA2, "Workload"), (V1BETA1, "Cohort")}


# --- ClusterQueue ---------------------------------------------------------------------------


def _cq(version: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": version, "kind": "ClusterQueue", "metadata": {"name": "q"}, "spec": spec}


def test_cohort_admission_checks_and_fungibility_are_renamed() -> None:
    old = _cq(
        V1BETA1,
        cohort="team",
        admissionChecks=["prov", "mk"],
        flavorFungibility={"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"},
    )
    new = convert(old, V1BETA2).to_dict()
    assert new["spec"] == {
        "cohortName": "team",
        "admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}, {"name": "mk"}]},
        "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"},
    }
    assert_admitted(new)
    assert convert(new, V1BETA1).to_dict() == old


def test_strategy_rules_with_flavors_stay_a_strategy() -> None:
    strategy = {"admissionChecks": [{"name": "prov", "onFlavors": ["gpu"]}]}
    new = _cq(V1BETA2, admissionChecksStrategy=strategy)
    old = convert(new, V1BETA1).to_dict()
    assert old["spec"] == {"admissionChecksStrategy": strategy}
    assert convert(old, V1BETA2).to_dict() == new


def test_both_admission_check_forms_are_refused() -> None:
    old = _cq(V1BETA1, admissionChecks=["a"], admissionChecksStrategy={"admissionChecks": []})
    with pytest.raises(ConversionError, match=r"spec\.admissionChecks: .*strategy"):
        convert(old, V1BETA2)


def test_v1beta1_only_status_is_refused_by_path() -> None:
    old = _cq(V1BETA1)
    old["status"] = {"pendingWorkloadsStatus": {"lastChangeTime": "2024-01-01T00:00:00Z"}}
    with pytest.raises(ConversionError) as caught:
        convert(old, V1BETA2)
    assert caught.value.path == "status.pendingWorkloadsStatus"
    assert "v1beta2 ClusterQueue has no such field" in str(caught.value)


def test_a_value_the_target_rejects_names_its_path() -> None:
    old = _cq(V1BETA1, admissionScope={"admissionMode": "Sometimes"})
    with pytest.raises(ConversionError) as caught:
        convert(old, V1BETA2)
    assert caught.value.path == "spec.admissionScope.admissionMode"
    assert "Sometimes" in str(caught.value)


def test_unknown_fields_are_carried_where_the_parent_exists() -> None:
    old = _cq(V1BETA1, cohort="a", futureField={"x": 1})
    old["spec"]["preemption"] = {"withinClusterQueue": "Never", "futureKnob": True}
    new = convert(old, V1BETA2).to_dict()
    assert new["spec"]["futureField"] == {"x": 1}
    assert new["spec"]["preemption"]["futureKnob"] is True
    assert convert(new, V1BETA1).to_dict() == old


def test_an_unknown_field_named_like_the_target_field_is_not_overwritten() -> None:
    old = _cq(V1BETA1, cohort="a", cohortName="b")
    with pytest.raises(ConversionError, match=r"spec\.cohort: spec\.cohortName is set as well"):
        convert(old, V1BETA2)


# --- LocalQueue, MultiKueueCluster, AdmissionCheck ------------------------------------------


def test_localqueue_flavor_usage_is_renamed_and_flavors_refused() -> None:
    usage = [{"name": "default", "resources": [{"name": "cpu", "total": "1"}]}]
    old: dict[str, Any] = {
        "apiVersion": V1BETA1,
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"},
        "status": {"flavorUsage": usage},
    }
    new = convert(old, V1BETA2).to_dict()
    assert new["status"] == {"flavorsUsage": usage}
    assert convert(new, V1BETA1).to_dict() == old
    with_flavors = copy.deepcopy(old)
    with_flavors["status"]["flavors"] = [{"name": "default"}]
    with pytest.raises(ConversionError) as caught:
        convert(with_flavors, V1BETA2)
    assert caught.value.path == "status.flavors"


def _mkc(version: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": version,
        "kind": "MultiKueueCluster",
        "metadata": {"name": "w"},
        "spec": spec,
    }


def test_multikueuecluster_source_moves_and_extras_travel_with_it() -> None:
    old = _mkc(V1BETA1, {"kubeConfig": {"location": "s", "locationType": "Secret", "z": 1}})
    new = convert(old, V1BETA2).to_dict()
    assert new["spec"] == {"clusterSource": {"kubeConfig": old["spec"]["kubeConfig"]}}
    assert convert(new, V1BETA1).to_dict() == old


def test_multikueuecluster_refusals() -> None:
    both = _mkc(
        V1BETA1,
        {
            "kubeConfig": {"location": "s", "locationType": "Secret"},
            "clusterProfileRef": {"name": "p"},
        },
    )
    with pytest.raises(ConversionError) as caught:
        convert(both, V1BETA2)
    assert caught.value.path == "spec.clusterProfileRef"
    profile = _mkc(V1BETA2, {"clusterSource": {"clusterProfileRef": {"name": "p"}}})
    with pytest.raises(ConversionError) as caught:
        convert(profile, V1BETA1)
    assert caught.value.path == "spec.clusterSource.clusterProfileRef"


def test_admissioncheck_retry_delay_default_is_dropped_other_values_refused() -> None:
    check: dict[str, Any] = {
        "apiVersion": V1BETA1,
        "kind": "AdmissionCheck",
        "metadata": {"name": "c"},
        "spec": {"controllerName": "kueue.x-k8s.io/multikueue", "retryDelayMinutes": 15},
    }
    assert "retryDelayMinutes" not in convert(check, V1BETA2).to_dict()["spec"]
    check["spec"]["retryDelayMinutes"] = 5
    with pytest.raises(ConversionError) as caught:
        convert(check, V1BETA2)
    assert caught.value.path == "spec.retryDelayMinutes"


def test_multikueueconfig_quota_management_has_no_v1beta1_form() -> None:
    config = {
        "apiVersion": V1BETA2,
        "kind": "MultiKueueConfig",
        "metadata": {"name": "c"},
        "spec": {"clusters": ["a"], "quotaManagement": "Manual"},
    }
    with pytest.raises(ConversionError) as caught:
        convert(config, V1BETA1)
    assert caught.value.path == "spec.quotaManagement"
