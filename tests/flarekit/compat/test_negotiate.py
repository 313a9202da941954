"""Version negotiation against FakeCluster serving the CRDs of real release sets: each release
is identified from its CRDs, and without CRD access the answer degrades to discovery."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from negotiate_support import client_of

from flarekit.compat import FamilyRelease, negotiate
from flarekit_models._crds import crds_for
from flarekit_testing import FakeCluster

#: The release sets of the compatibility matrix (one FakeCluster each).
SETS: dict[str, dict[str, str]] = {
    "old": {"kuberay": "v1.1.1", "kueue": "v0.10.6", "trainer": "v2.0.1", "appwrapper": "v1.0.7"},
    "middle": {"kuberay": "v1.4.2", "kueue": "v0.14.8", "appwrapper": "v1.2.1"},
    "new": {"kuberay": "v1.7.0", "kueue": "v0.19.2", "trainer": "v2.3.0", "jobset": "v0.12.0"},
    "legacy": {"appwrapper-mcad": "v1.40.0", "training-operator": "v1.9.4", "kueue": "v0.14.8"},
}
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture(scope="module", params=sorted(SETS))
def served(request: pytest.FixtureRequest) -> Iterator[tuple[FakeCluster, dict[str, str]]]:
    with FakeCluster(releases=SETS[request.param]) as fc:
        yield fc, SETS[request.param]


def test_each_release_is_identified_from_its_crds(served: Any) -> None:
    fc, releases = served
    found = negotiate(client_of(fc))
    for name, fam in found.items():
        if name not in releases:
            assert not fam.installed, name
            assert fam.release_text() == "not installed"
            continue
        assert fam.exact, (name, fam)
        assert releases[name] in fam.candidates
        if name == "appwrapper":  # v1.0.7 and v1.2.1 differ only in descriptions
            assert fam.candidates == ("v1.0.7", "v1.2.1")
            assert fam.release is None
            assert fam.release_text() == "v1.0.7 or v1.2.1 (identical schemas)"
        else:
            assert fam.candidates == (releases[name],)
            assert fam.release == releases[name]
            assert fam.release_text() == releases[name]


def test_kueue_versions_and_flags(served: Any) -> None:
    fc, releases = served
    kueue = negotiate(client_of(fc))["kueue"]
    by_name = {v.name: v for v in kueue.versions}
    if releases["kueue"] == "v0.19.2":
        assert by_name["v1beta2"].storage and not by_name["v1beta2"].deprecated
        assert by_name["v1beta1"].deprecated and not by_name["v1beta1"].storage
        assert "v1beta2" in str(by_name["v1beta1"].deprecation_warning)
        assert kueue.newest("LocalQueue") == "v1beta2"
    else:
        assert "v1beta2" not in by_name
        assert by_name["v1beta1"].storage and not by_name["v1beta1"].deprecated
        assert kueue.newest("LocalQueue") == "v1beta1"
    cohort = "v1alpha1" if releases["kueue"] == "v0.10.6" else "v1beta1"
    assert "Cohort" in by_name[cohort].kinds


def test_table_reads_like_the_issue_says() -> None:
    with FakeCluster(releases=SETS["new"]) as fc:
        table = negotiate(client_of(fc)).table()
    lines = {line.split("  ")[0]: " ".join(line.split()) for line in table.splitlines()}
    assert lines["Kueue"] == (
        "Kueue v1beta2 (served, storage), v1beta1 (deprecated) release v0.19.2"
    )
    assert lines["KubeRay"] == "KubeRay v1 (served, storage), v1alpha1 (deprecated) release v1.7.0"
    assert lines["Kubeflow Trainer"].endswith("release v2.3.0")
    assert lines["AppWrapper"] == "AppWrapper not installed"


def test_legacy_cluster_has_training_operator_and_mcad_but_no_trainer() -> None:
    with FakeCluster(releases=SETS["legacy"]) as fc:
        found = negotiate(client_of(fc))
    assert not found["trainer"].installed and not found["appwrapper"].installed
    assert found["training-operator"].release == "v1.9.4"
    assert found["appwrapper-mcad"].release == "v1.40.0"
    assert found["appwrapper-mcad"].served_versions("AppWrapper") == ["v1beta1"]
    assert found.to_dict()["families"][0]["family"] == "kuberay"


def test_answer_is_cached_per_client_and_forgotten_on_request(served: Any) -> None:
    fc, _ = served
    client = client_of(fc)
    negotiate(client)
    before = len(fc.requests)
    negotiate(client)
    negotiate(client, ["kueue"])
    assert len(fc.requests) == before
    client.forget()
    negotiate(client, ["kueue"])
    assert fc.request_count("GET", CRDS) > 0 and len(fc.requests) > before


def test_a_family_alone_reads_only_its_own_crds() -> None:
    with FakeCluster(releases=SETS["new"]) as fc:
        fc.clear_requests()
        negotiate(client_of(fc), ["kuberay"])
        paths = {r.path for r in fc.requests}
    assert {p for p in paths if p.startswith(CRDS)} == {
        f"{CRDS}/{name}.ray.io" for name in ("rayclusters", "raycronjobs", "rayjobs", "rayservices")
    }
    assert not [p for p in paths if "kueue" in p]


# -- without CRD access ---------------------------------------------------------------------


def test_denied_crd_read_degrades_to_discovery(served: Any) -> None:
    fc, releases = served
    user = fc.add_user("scientist")
    fc.deny(["get", "list"], "customresourcedefinitions", user="scientist")
    try:
        found = negotiate(client_of(fc, token=user))
        assert fc.request_count("GET", CRDS, status=403) >= 1
    finally:
        fc.clear_denies()
    for name, fam in found.items():
        if name not in releases:
            assert not fam.installed
            continue
        assert fam.how == "discovery" and fam.release is None
        text = fam.release_text()
        assert text.startswith("unknown (") and "CRDs not readable: forbidden" in text
        assert releases[name] in fam.candidates  # discovery never rules the truth out
        assert all(v.deprecated is None for v in fam.versions)  # only CRDs say so
        assert [v.name for v in fam.versions if v.storage]  # storageVersionHash does
    kueue = found["kueue"]
    if releases["kueue"] == "v0.19.2":
        assert ">= v0.15" in kueue.release_text()
    else:
        assert "< v0.15" in kueue.release_text()
    if "kuberay" in releases:  # RayCronJob is served from v1.7.0 only
        expected = ("v1.7.0",) if releases["kuberay"] == "v1.7.0" else ("v1.1.1", "v1.4.2")
        assert found["kuberay"].candidates == expected


def test_failing_crd_reads_degrade_and_are_not_remembered() -> None:
    with FakeCluster(releases={"kuberay": "v1.7.0"}) as fc:
        client = client_of(fc)
        fault = fc.inject(lambda r: r.path.startswith(CRDS), status=500, times=None)
        found = negotiate(client, ["kuberay"])["kuberay"]
        assert found.how == "discovery" and "CRDs not readable" in found.note
        assert found.candidates == ("v1.7.0",)  # RayCronJob: only v1.7.0 serves it
        fc.faults.clear()
        assert fault.hits >= 1
        again = negotiate(client, ["kuberay"])["kuberay"]  # asked again, not cached
    assert again.exact and again.release == "v1.7.0"


def _drop_field(crd: dict[str, Any], field: str) -> dict[str, Any]:
    out = copy.deepcopy(crd)
    out["metadata"] = {"name": crd["metadata"]["name"]}  # no hint of where it came from
    for version in out["spec"]["versions"]:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        spec.pop(field, None)
    return out


def test_an_unpinned_release_is_reported_as_the_closest_pinned_one() -> None:
    crds = [_drop_field(c, "managedBy") for c in crds_for({"kuberay": "v1.4.2"})]
    with FakeCluster(crds=crds) as fc:
        client = client_of(fc)
        kuberay: FamilyRelease = negotiate(client, ["kuberay"])["kuberay"]
    assert kuberay.how == "closest" and not kuberay.exact
    assert kuberay.candidates == ("v1.4.2",)
    assert kuberay.release_text() == "~v1.4 (closest pinned; exact release unknown)"
    assert 0.9 < kuberay.similarity < 1.0
    # what that server keeps is read from its own CRD, not from the closest release
    assert kuberay.crd_paths is not None
    paths = kuberay.crd_paths["ray.io/v1 RayCluster"]
    assert "spec.managedBy" not in paths and "spec.gcsFaultToleranceOptions" in paths


def test_descriptions_do_not_matter_but_schemas_do() -> None:
    crd = copy.deepcopy(crds_for({"kueue": "v0.19.2"}))
    for c in crd:
        c["metadata"] = {"name": c["metadata"]["name"]}
        for version in c["spec"]["versions"]:
            version["schema"]["openAPIV3Schema"]["description"] = "reworded upstream"
    with FakeCluster(crds=crd) as fc:
        kueue = negotiate(client_of(fc), ["kueue"])["kueue"]
    assert kueue.exact and kueue.release == "v0.19.2"
