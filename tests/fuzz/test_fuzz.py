"""The models agree with the reference on mutated real objects (a short campaign per family;
``make fuzz`` runs 5,000 cases per family), and the real API server judges them all: the
models, the reference and FakeCluster's admission must each give its verdict, at the same
paths, on every shared sample and on 500 mutated cases per family."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from campaign import FAMILIES, SAMPLES, Report, judge, reference_of, run, schema_of
from mutate import mutate, sites
from reference import MAX_DEPTH, Reference, is_date_time
from server import RealServer, ServerError, plane_releases
from verdicts import Side, compare

from flarekit_models import lookup
from flarekit_models._crds import default_releases
from flarekit_testing import ControlPlane
from flarekit_testing.controlplane._ports import free_port
from flarekit_testing.controlplane._rest import Rest, collection_path

CASES = int(os.environ.get("FLAREKIT_FUZZ_CASES", "120"))
#: Cases per family also sent to a real API server (``make test``: at least 500).
SERVER_CASES = int(os.environ.get("FLAREKIT_FUZZ_SERVER_CASES", "500"))

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


@pytest.fixture(scope="module")
def real_servers(
    control_plane: ControlPlane, controlplane_binaries: Path
) -> Iterator[Callable[[str], RealServer]]:
    """family -> the real API server that judges its cases: the session's control plane
    for the families its default releases serve, else a plane of its own serving the
    family's CRDs (appwrapper-mcad: MCAD's AppWrapper CRD), started when first needed."""
    started: dict[tuple[tuple[str, str], ...], RealServer] = {}
    with contextlib.ExitStack() as stack:

        def server_for(family: str) -> RealServer:
            releases = plane_releases(family)
            if releases == default_releases():
                return RealServer(control_plane)
            key = tuple(sorted(releases.items()))
            if key not in started:
                plane = ControlPlane(releases, binaries=controlplane_binaries, nodes=())
                started[key] = RealServer(stack.enter_context(plane), releases)
            return started[key]

        yield server_for


@pytest.mark.parametrize("family", FAMILIES)
def test_every_side_agrees_with_the_real_api_server(
    family: str, real_servers: Callable[[str], RealServer]
) -> None:
    # A few more cases than are sent: a case nested past what the JSON writer takes is not.
    report = run(family, SERVER_CASES + 25, server=real_servers(family), server_cases=SERVER_CASES)
    assert report.server_cases == SERVER_CASES, report.row()
    shown = "\n".join(str(d) for d in report.server_disagreements[:5])
    assert not report.server_disagreements, f"{report.row()}\n{shown}"
    assert not report.disagreements, report.row()
    for side in ("model", "reference", "fakecluster"):
        assert report.judged[side].agree > SERVER_CASES // 2, report.row()


def test_every_sample_is_judged_alike_by_the_real_api_server(
    real_servers: Callable[[str], RealServer],
) -> None:
    """The whole sample corpus, as it is: each side's verdict and paths are the server's."""
    reports: dict[str, Report] = {}
    for path in sorted(SAMPLES.glob("*/*/*/*.yaml")):
        obj = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            family = lookup(obj["apiVersion"], obj["kind"]).family
        except LookupError:
            continue
        report = reports.setdefault(family, Report(family))
        judge(family, obj, [f"(the sample {path.name})"], report, real_servers(family))
    assert set(reports) == set(FAMILIES)
    for report in reports.values():
        assert report.server_cases == sum(1 for _ in _samples_of(report.family)), report.row()
    failures = [d for r in reports.values() for d in r.server_disagreements]
    assert not failures, "\n".join(str(d) for d in failures[:5])


def _samples_of(family: str) -> Iterator[Path]:
    for path in sorted(SAMPLES.glob("*/*/*/*.yaml")):
        obj = yaml.safe_load(path.read_text(encoding="utf-8"))
        with contextlib.suppress(LookupError):
            if lookup(obj["apiVersion"], obj["kind"]).family == family:
                yield path


class _Unreachable:
    """A control plane reached at a port where nothing listens: every request is a
    transport error."""

    def __init__(self, plane: ControlPlane) -> None:
        self._plane = plane
        self.rest = Rest(dataclasses.replace(plane.rest.endpoint, port=free_port()))

    def resource(self, name: str) -> object:
        return self._plane.resource(name)


def test_a_transport_error_is_an_error_not_a_refusal(control_plane: ControlPlane) -> None:
    server = RealServer(_Unreachable(control_plane))  # type: ignore[arg-type]
    with pytest.raises(ServerError, match="no answer from the server"):
        run("kuberay", 3, server=server, server_cases=3)


def test_a_refusal_at_another_path_is_a_disagreement() -> None:
    judge = Side(False, {"spec.workerGroupSpecs.0.replicas"})
    assert not compare(Side(False, {"spec.workerGroupSpecs.0.replicas"}), judge).disagrees
    outcome = compare(Side(False, {"spec.headGroupSpec.rayStartParams"}), judge)
    assert outcome.disagrees and outcome.result == "both refuse, at other paths"
    # A refusal at the bad place and at a good one is not agreement either.
    both = Side(False, {"spec.workerGroupSpecs.0.replicas", "spec.headGroupSpec"})
    assert compare(both, judge).disagrees
    # ... unless the other place is one the judge drops without a word (documented).
    assert not compare(both, judge, pruned={"spec.headGroupSpec"}).disagrees


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
