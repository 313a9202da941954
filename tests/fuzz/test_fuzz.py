"""The models agree with the reference on mutated real objects (a short campaign per family;
``make fuzz`` runs 5,000 cases per family), and the reference itself is checked on the
shared samples, whose verdicts are known."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from campaign import FAMILIES, SAMPLES, reference_of, run, schema_of
from mutate import mutate, sites
from reference import MAX_DEPTH, Reference, is_date_time
from server import RealServer

from flarekit_models import RESOURCES, lookup
from flarekit_models._crds import default_releases
from flarekit_testing import ControlPlane
from flarekit_testing.controlplane._rest import collection_path

CASES = int(os.environ.get("FLAREKIT_FUZZ_CASES", "120"))
#: Cases per family also sent to the session's real API server.
SERVER_CASES = int(os.environ.get("FLAREKIT_FUZZ_SERVER_CASES", "40"))
SERVED = sorted({r.family for r in RESOURCES if r.family in default_releases()})

#: Samples the API server refuses, and a path the reference must name for each.
REFUSED = {
    "codeflare-sdk--tests-test-cluster-yamls-ray-unit-test-all-params-yaml--0.yaml": (
        "spec.headGroupSpec.template.spec.containers.0.volumeMounts.2"
    ),
    "jobset--site-static-examples-failure-policy-failjobset-action-yaml--0.yaml": (
        "spec.failurePolicy.rules.0.name"
    ),
    "kueue--site-static-examples-jobs-sample-xgboostjob-yaml--0.yaml": (
        "spec.xgbReplicaSpecs.Master.template.spec.containers.0.resources.requests.cpu"
    ),
    "multi-cluster-app-dispatcher--test-e2e-kuttl-quota-forest-04-assert-yaml--0.yaml": "spec",
}


@pytest.mark.parametrize("family", FAMILIES)
def test_the_models_agree_with_the_reference(family: str) -> None:
    report = run(family, CASES)
    assert report.seeds > 0, f"no sample of {family} in {SAMPLES}"
    assert report.cases == CASES
    assert report.both_accept > 0 and report.both_refuse > 0, report.row()
    shown = "\n".join(str(d) for d in report.disagreements[:5])
    assert not report.disagreements, f"{report.row()}\n{shown}"


@pytest.mark.parametrize("family", SERVED)
def test_the_reference_agrees_with_the_real_api_server(
    family: str, control_plane: ControlPlane
) -> None:
    report = run(family, SERVER_CASES, server=RealServer(control_plane), server_cases=SERVER_CASES)
    assert report.server_cases > 0, report.row()
    shown = "\n".join(str(d) for d in report.server_disagreements[:5])
    assert not report.server_disagreements, f"{report.row()}\n{shown}"
    assert not report.disagreements, report.row()


def _nested_text(total: int) -> str:
    """A RayCluster whose deepest value is at nesting level ``total`` (the object is 1)."""
    head = (
        '{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"deep"},'
        '"spec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":'
        '[{"name":"ray-head","image":"rayproject/ray:2.9.0"}]}}},"unknownField":'
    )
    levels = total - 3  # the object (1), spec (2), then the unknown field's value from 3
    return head + '{"a":' * levels + "{}" + "}" * levels + "}}"


def test_the_real_api_server_takes_10000_levels_and_no_more(control_plane: ControlPlane) -> None:
    resource = control_plane.resource("rayclusters.ray.io")
    path = collection_path(resource, "v1", "default")
    query = {"dryRun": "All"}
    control_plane.rest.request("POST", path, _nested_text(MAX_DEPTH).encode(), query=query)
    with pytest.raises(Exception, match="exceeded max depth"):
        control_plane.rest.request("POST", path, _nested_text(MAX_DEPTH + 1).encode(), query=query)


def _sample(name: str) -> dict[str, object]:
    (path,) = SAMPLES.glob(f"*/*/*/{name}")
    loaded: dict[str, object] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def test_the_reference_accepts_the_samples_the_api_server_accepts() -> None:
    refused = []
    for path in sorted(SAMPLES.glob("*/*/*/*.yaml")):
        obj = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            lookup(obj["apiVersion"], obj["kind"])
        except LookupError:
            continue
        if not reference_of(obj["apiVersion"], obj["kind"]).admit(obj).ok:
            refused.append(path.name)
    known = {n for n in refused if n in REFUSED or "kuttl" in n or "failure-policy" in n}
    assert set(refused) == known
    assert set(REFUSED) <= set(refused)


@pytest.mark.parametrize(("name", "where"), sorted(REFUSED.items()))
def test_the_reference_refuses_what_the_api_server_refuses(name: str, where: str) -> None:
    obj = _sample(name)
    verdict = reference_of(str(obj["apiVersion"]), str(obj["kind"])).admit(obj)
    assert where in {".".join(map(str, path)) for path, _ in verdict.errors}


def test_pruning_nulls_and_defaults_happen_before_validation() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["mode", "size"],
                "properties": {
                    "mode": {"type": "string", "default": "auto"},
                    "size": {"type": "integer", "format": "int32"},
                    "note": {"type": "string"},
                },
            }
        },
    }
    reference = Reference(schema)
    verdict = reference.admit({"spec": {"size": 1, "note": None, "other": 2}})
    assert verdict.ok and verdict.stored == {"spec": {"size": 1, "mode": "auto"}}
    assert sorted(verdict.pruned) == [("spec", "note"), ("spec", "other")]
    assert not reference.admit({"spec": {"size": None}}).ok
    assert not reference.admit({"spec": {"size": 2**31}}).ok
    float_size = reference.admit({"spec": {"size": 3.0}})
    assert float_size.ok and float_size.integral_floats == [("spec", "size")]
    assert not reference.admit({"spec": {"size": float("nan")}}).ok


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("2024-05-01T10:00:00Z", True),
        ("2024-05-01t10:00:00.5+01:00", True),
        ("2024-02-30T10:00:00Z", False),
        ("2024-05-01T10:00:00", False),
        ("2024-05-01T10:00:00Z\n", False),
    ],
)
def test_the_reference_reads_date_times_as_kube_openapi(text: str, valid: bool) -> None:
    assert is_date_time(text) is valid


def test_mutations_change_objects_and_reach_every_part() -> None:
    import random

    obj = _sample("kuberay--ray-operator-config-samples-ray-cluster-complete-yaml--0.yaml")
    schema = schema_of(str(obj["apiVersion"]), str(obj["kind"]))
    places = sites(obj, schema)
    assert {p.present for p in places} == {True, False}
    assert any("containers" in p.path for p in places)
    rng = random.Random(1)
    changed = 0
    for _ in range(50):
        copy = yaml.safe_load(yaml.safe_dump(obj))
        mutate(copy, schema, rng)
        changed += copy != obj
    assert changed >= 45


def test_the_fuzz_suite_is_documented() -> None:
    readme = (Path(__file__).resolve().parents[2] / "docs" / "fuzzing.md").read_text()
    assert "make fuzz" in readme and "integral-float" in readme and "pruned" in readme
