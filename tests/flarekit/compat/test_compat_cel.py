"""The CRDs' CEL rules (``x-kubernetes-validations``) evaluated before a write, as the API
server evaluates them: the place and message it reports, transition rules only on updates,
every shared sample passing, and `prepare_write` refusing before any request."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from compat_support import SAMPLES, load, served_schema
from negotiate_support import client_of, writes

from flarekit.compat import RuleFailure, RulesFailed, prepare_write, rule_failures
from flarekit_models import lookup
from flarekit_testing import FakeCluster

KUEUE = "kueue.x-k8s.io/v1beta2"


def cluster_queue(**spec: Any) -> dict[str, Any]:
    flavor = {"name": "default", "resources": [{"name": "cpu", "nominalQuota": 4}]}
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": "team-a"},
        "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [flavor]}], **spec},
    }


def failures(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[RuleFailure]:
    return rule_failures(obj, served_schema(obj["apiVersion"], obj["kind"]), old)


def test_a_valid_object_passes_every_rule() -> None:
    assert failures(cluster_queue()) == []


def test_failures_name_the_place_and_message_the_api_server_reports() -> None:
    obj = cluster_queue(
        flavorFungibility={"preference": "BorrowingOverPreemption", "whenCanBorrow": "Borrow"}
    )
    group = obj["spec"]["resourceGroups"][0]
    group["coveredResources"].append("memory")
    group["flavors"][0]["resources"][0]["borrowingLimit"] = 1
    found = {(f.path, f.message) for f in failures(obj)}
    # The places and messages kube-apiserver v1.35 answers for this object (422):
    # "spec: Invalid value: ...: borrowingLimit must be nil when cohort is empty", ...
    assert found == {
        ("spec", "borrowingLimit must be nil when cohort is empty"),
        (
            "spec.resourceGroups[0]",
            "flavors must have the same number of resources as the coveredResources",
        ),
        (
            "spec.flavorFungibility",
            "preference can only be set when both whenCanBorrow and whenCanPreempt are "
            "TryNextFlavor",
        ),
    }


def test_rules_run_on_the_object_as_stored_pruned_and_defaulted() -> None:
    obj = cluster_queue(cohortName=None)  # a null the server drops: the cohort is empty
    obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = 1
    obj["spec"]["notAField"] = {"cohortName": "x"}  # pruned before the rules run
    assert [f.path for f in failures(obj)] == ["spec"]


def test_a_transition_rule_runs_only_on_an_update() -> None:
    queue = {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "default"},
        "spec": {"clusterQueue": "team-a"},
    }
    moved = copy.deepcopy(queue)
    moved["spec"]["clusterQueue"] = "team-b"
    assert failures(moved) == []  # a create: no old object
    assert failures(moved, old=queue) and all(
        f.rule == "self == oldSelf" for f in failures(moved, old=queue)
    )
    assert [f.path for f in failures(moved, old=queue)] == ["spec.clusterQueue"]
    assert failures(queue, old=queue) == []


def test_a_rule_that_cannot_be_evaluated_fails() -> None:
    # kube-apiserver reports an evaluation error (here: "no such key: limit") as a failure
    # of the rule at its place, never as a pass.
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"limit": {"type": "integer"}, "used": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "self.used <= self.limit"}],
            }
        },
    }
    found = rule_failures({"spec": {"used": 1}}, schema)
    assert [f.path for f in found] == ["spec"]
    assert found[0].message.startswith("failed rule: self.used <= self.limit")
    assert "could not be evaluated" in found[0].message
    assert rule_failures({"spec": {"used": 1, "limit": 2}}, schema) == []


def test_has_of_a_field_under_an_absent_field_fails_as_on_the_api_server() -> None:
    # kube-apiserver's CEL: has(t.metadata.namespace) with no t.metadata is "no such key:
    # metadata", an error that fails the rule (JobSet's and Trainer's volumeClaimPolicies
    # rule); cel-python alone answers false there and would pass the object.
    rule = "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)"
    template = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"templates": {"type": "array", "items": template}},
                "x-kubernetes-validations": [{"rule": rule, "message": "no namespace"}],
            }
        },
    }

    def failed(templates: list[Any]) -> list[str]:
        return [f.path for f in rule_failures({"spec": {"templates": templates}}, schema)]

    assert failed([{"spec": {}}]) == ["spec"]
    assert failed([{"metadata": {"namespace": "x"}}]) == ["spec"]
    assert failed([{"metadata": {}}]) == []
    assert failed([{"metadata": {"namespace": ""}}]) == []


def test_every_shared_sample_passes_the_rules_of_its_crd() -> None:
    checked = 0
    failed: list[str] = []
    for path in sorted(SAMPLES.glob("*/*/*/*.yaml")):
        obj = load(path)
        try:
            lookup(obj["apiVersion"], obj["kind"])
        except LookupError:  # a kind without a model (Kubernetes' own)
            continue
        checked += 1
        schema = served_schema(obj["apiVersion"], obj["kind"])
        failed += [f"{path.stem}: {f}" for f in rule_failures(obj, schema)]
    assert checked > 100
    assert failed == []


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster() as cluster:
        yield cluster


def test_prepare_write_refuses_a_failing_object_before_any_request(fc: FakeCluster) -> None:
    obj = cluster_queue()
    obj["spec"]["resourceGroups"][0]["coveredResources"].append("memory")
    fc.clear_requests()
    with pytest.raises(RulesFailed) as caught:
        prepare_write(client_of(fc), obj, subject="ClusterQueue 'team-a'")
    error = caught.value
    assert error.fields == ["spec.resourceGroups[0]"]
    assert "flavors must have the same number of resources" in str(error)
    assert "ClusterQueue 'team-a'" in str(error)
    assert writes(fc) == 0


def test_any_depth_the_api_server_takes_is_evaluated() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
                "x-kubernetes-validations": [{"rule": "has(self.free.a)", "message": "no a"}],
            }
        },
    }
    value: Any = {}
    for _ in range(9_000):
        value = {"a": value}
    assert rule_failures({"spec": {"free": value}}, schema) == []
    assert [f.message for f in rule_failures({"spec": {"free": {"b": value}}}, schema)] == ["no a"]


def test_evaluating_rules_leaves_the_recursion_limit_as_it_was() -> None:
    # cel-python's Environment sets the limit to 2,500 for the whole process.
    from flarekit.compat import _cel

    limit = sys.getrecursionlimit()
    _cel._environment.cache_clear()
    _cel._program.cache_clear()
    sys.setrecursionlimit(123_456)
    try:
        assert failures(cluster_queue(flavorFungibility={"preference": "x"}))
        assert sys.getrecursionlimit() == 123_456
    finally:
        sys.setrecursionlimit(limit)
