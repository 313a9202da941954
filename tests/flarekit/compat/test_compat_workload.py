"""Workload v1beta1 <-> v1beta2: priority class reference, renamed status, topology slices."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from compat_support import assert_admitted

from flarekit.compat import ConversionError, convert

V1BETA1 = "kueue.x-k8s.io/v1beta1"
V1BETA2 = "kueue.x-k8s.io/v1beta2"


def _workload(version: str, **spec: Any) -> dict[str, Any]:
    pod_set = {
        "name": "main",
        "count": 3,
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    }
    return {
        "apiVersion": version,
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"queueName": "lq", "podSets": [pod_set], **spec},
    }


@pytest.mark.parametrize(
    ("source", "group", "kind"),
    [
        ("kueue.x-k8s.io/workloadpriorityclass", "kueue.x-k8s.io", "WorkloadPriorityClass"),
        ("scheduling.k8s.io/priorityclass", "scheduling.k8s.io", "PriorityClass"),
    ],
)
def test_priority_class_becomes_a_reference(source: str, group: str, kind: str) -> None:
    old = _workload(V1BETA1, priorityClassSource=source, priorityClassName="high", priority=10)
    new = convert(old, V1BETA2).to_dict()
    assert new["spec"]["priorityClassRef"] == {"group": group, "kind": kind, "name": "high"}
    assert "priorityClassSource" not in new["spec"]
    assert_admitted(new)
    assert convert(new, V1BETA1).to_dict() == old


def test_default_empty_priority_source_means_no_class() -> None:
    new = convert(_workload(V1BETA1, priorityClassSource=""), V1BETA2).to_dict()
    assert new == _workload(V1BETA2)


def test_priority_name_without_source_is_refused() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(_workload(V1BETA1, priorityClassName="high"), V1BETA2)
    assert caught.value.path == "spec.priorityClassName"
    assert "workloadpriorityclass" in caught.value.reason


def test_preemption_gates_have_no_v1beta1_form() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(_workload(V1BETA2, preemptionGates=[{"name": "g"}]), V1BETA1)
    assert caught.value.path == "spec.preemptionGates"


def _admitted(version: str, assignment: dict[str, Any], **status: Any) -> dict[str, Any]:
    obj = _workload(version)
    obj["status"] = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [{"name": "main", "count": 3, "topologyAssignment": assignment}],
        },
        **status,
    }
    return obj


def test_topology_domains_become_one_slice_and_come_back() -> None:
    domains = [
        {"values": ["block-a", "rack-1"], "count": 2},
        {"values": ["block-a", "rack-2"], "count": 1},
    ]
    old = _admitted(
        V1BETA1,
        {"levels": ["block", "rack"], "domains": domains},
        accumulatedPastExexcutionTimeSeconds=30,
    )
    new = convert(old, V1BETA2).to_dict()
    assignment = new["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert assignment["slices"] == [
        {
            "domainCount": 2,
            "valuesPerLevel": [
                {"universal": "block-a"},
                {"individual": {"roots": ["rack-1", "rack-2"]}},
            ],
            "podCounts": {"individual": [2, 1]},
        }
    ]
    assert new["status"]["accumulatedPastExecutionTimeSeconds"] == 30
    assert_admitted(new)
    assert convert(new, V1BETA1).to_dict() == old


def test_slices_with_prefixes_expand_to_domains() -> None:
    slices = [
        {
            "domainCount": 2,
            "valuesPerLevel": [
                {"individual": {"prefix": "n-", "roots": ["1", "2"], "suffix": "x"}}
            ],
            "podCounts": {"universal": 4},
        }
    ]
    new = _admitted(V1BETA2, {"levels": ["host"], "slices": slices})
    old = convert(new, V1BETA1).to_dict()
    assert old["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] == {
        "levels": ["host"],
        "domains": [{"values": ["n-1x"], "count": 4}, {"values": ["n-2x"], "count": 4}],
    }
    assert_admitted(old)


def test_slices_with_wrong_root_count_are_refused() -> None:
    slices = [
        {
            "domainCount": 2,
            "valuesPerLevel": [{"individual": {"roots": ["1"]}}],
            "podCounts": {"universal": 1},
        }
    ]
    bad = _admitted(V1BETA2, {"levels": ["host"], "slices": slices})
    with pytest.raises(ConversionError) as caught:
        convert(copy.deepcopy(bad), V1BETA1)
    assert caught.value.path == (
        "status.admission.podSetAssignments[0].topologyAssignment.slices[0]"
        ".valuesPerLevel[0].individual.roots"
    )
