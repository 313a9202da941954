"""Trainer's pod customisation lands in the field each release has (podSpecOverrides in
v2.0, runtimePatches from v2.2), found from the CRD when it can be read, by trying when not,
and what a release's field cannot hold is refused by path."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from negotiate_support import client_of, creates, torch_runtime

from flarekit._validation import ConfigError
from flarekit.compat import (
    PATCH_MANAGER,
    FieldUnavailable,
    family_release,
    move_pod_field,
    pod_field_of,
    prepare_write,
)
from flarekit.job import TrainJob
from flarekit_testing import FakeCluster

POD = {
    "nodeSelector": {"pool": "gpu"},
    "tolerations": [{"key": "gpu", "operator": "Exists"}],
    "volumes": [{"name": "data", "emptyDir": {}}],
    "containers": [{"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
}


@pytest.fixture(scope="module", params=["v2.0.1", "v2.3.0"])
def trainer(request: pytest.FixtureRequest) -> Iterator[tuple[FakeCluster, str]]:
    with FakeCluster(releases={"trainer": request.param, "jobset": "v0.8.2"}) as fc:
        fc.create(torch_runtime())
        yield fc, request.param


def trainjob(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec},
    }


def runtime_patch(pod: dict[str, Any]) -> list[dict[str, Any]]:
    job = {"name": "node", "template": {"spec": {"template": {"spec": pod}}}}
    patch = {"template": {"spec": {"replicatedJobs": [job]}}}
    return [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": patch}]


def test_negotiation_names_the_field_of_each_release(trainer: Any) -> None:
    fc, release = trainer
    expected = "podSpecOverrides" if release == "v2.0.1" else "runtimePatches"
    assert pod_field_of(family_release(client_of(fc), "trainer")) == expected


def test_facade_writes_pod_options_in_the_releases_field_at_once(trainer: Any) -> None:
    fc, release = trainer
    before = creates(fc, "trainjobs")
    name = f"pods-{release.replace('.', '-')}"
    TrainJob(
        name,
        client=client_of(fc),
        node_selector={"pool": "gpu"},
        tolerations=[{"key": "gpu", "operator": "Exists"}],
        volumes=[{"name": "data", "emptyDir": {}}],
        volume_mounts=[{"name": "data", "mountPath": "/data"}],
    ).submit()
    assert creates(fc, "trainjobs") - before == 1
    stored = fc.get("trainjobs", name, "default")
    assert stored is not None
    spec = stored["spec"]
    if release == "v2.0.1":
        assert "runtimePatches" not in spec
        (entry,) = spec["podSpecOverrides"]
        assert entry["nodeSelector"] == {"pool": "gpu"}
        assert entry["containers"][0]["volumeMounts"][0]["mountPath"] == "/data"
    else:
        assert "podSpecOverrides" not in spec
        pod = spec["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
        assert pod["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["tolerations"]


def test_without_crd_access_the_field_is_found_by_trying() -> None:
    with FakeCluster(releases={"trainer": "v2.0.1", "jobset": "v0.8.2"}) as fc:
        fc.create(torch_runtime())
        user = fc.add_user("no-crds")
        fc.deny(["get", "list"], "customresourcedefinitions", user="no-crds")
        client = client_of(fc, token=user)
        assert pod_field_of(family_release(client, "trainer")) is None  # v2.0.1 or v2.3.0
        TrainJob("tried", client=client, node_selector={"pool": "a"}).submit()
        # runtimePatches and podTemplateOverrides were refused as unknown, nothing stored
        assert creates(fc, "trainjobs") == 3
        tried = fc.get("trainjobs", "tried", "default")
        assert tried is not None and tried["spec"]["podSpecOverrides"]


def test_a_runtime_patch_is_moved_where_the_release_wants_it(trainer: Any) -> None:
    fc, release = trainer
    sent = prepare_write(client_of(fc), trainjob({"runtimePatches": runtime_patch(POD)}))
    spec = sent.to_dict()["spec"]
    if release == "v2.3.0":
        assert spec["runtimePatches"] == runtime_patch(POD)
        return
    assert "runtimePatches" not in spec
    assert spec["podSpecOverrides"] == [{"targetJobs": [{"name": "node"}], **POD}]


def test_what_pod_spec_overrides_cannot_hold_is_refused(trainer: Any) -> None:
    fc, release = trainer
    pod = {**POD, "affinity": {"nodeAffinity": {}}, "imagePullSecrets": [{"name": "r"}]}
    obj = trainjob({"runtimePatches": runtime_patch(pod)})
    if release == "v2.3.0":
        assert prepare_write(client_of(fc), obj).to_dict()["spec"]["runtimePatches"]
        return
    with pytest.raises(FieldUnavailable) as caught:
        prepare_write(client_of(fc), obj)
    assert sorted(m.path for m in caught.value.missing) == [
        "spec.podSpecOverrides[0].affinity",
        "spec.podSpecOverrides[0].imagePullSecrets",
    ]
    assert "Kubeflow Trainer v2.0.1" in str(caught.value)


def test_active_deadline_needs_trainer_2_3(trainer: Any) -> None:
    fc, release = trainer
    obj = trainjob({"activeDeadlineSeconds": 60})
    if release == "v2.3.0":
        prepare_write(client_of(fc), obj)
        return
    with pytest.raises(FieldUnavailable) as caught:
        prepare_write(client_of(fc), obj)
    assert "trainer v2.3.0" in str(caught.value)


# -- moving between the three shapes (offline) ----------------------------------------------


def test_moves_round_trip_through_every_field() -> None:
    start = trainjob({"runtimePatches": runtime_patch(POD)})
    template = move_pod_field(start, "podTemplateOverrides")
    assert template["spec"]["podTemplateOverrides"] == [
        {"targetJobs": [{"name": "node"}], "spec": POD}
    ]
    overrides = move_pod_field(template, "podSpecOverrides")
    assert overrides["spec"]["podSpecOverrides"] == [{"targetJobs": [{"name": "node"}], **POD}]
    assert move_pod_field(overrides, "runtimePatches") == start
    assert move_pod_field(start, "runtimePatches") == start


def test_moves_refuse_what_the_target_lacks() -> None:
    labelled = copy.deepcopy(runtime_patch(POD))
    job = labelled[0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    job["template"]["spec"]["template"]["metadata"] = {"labels": {"team": "a"}}
    with pytest.raises(ConfigError, match="podSpecOverrides"):
        move_pod_field(trainjob({"runtimePatches": labelled}), "podSpecOverrides")
    assert move_pod_field(trainjob({"runtimePatches": labelled}), "podTemplateOverrides")["spec"][
        "podTemplateOverrides"
    ][0]["metadata"] == {"labels": {"team": "a"}}
    job["template"]["spec"]["parallelism"] = 2  # a Job setting, not a pod one
    with pytest.raises(ConfigError) as caught:
        move_pod_field(trainjob({"runtimePatches": labelled}), "podTemplateOverrides")
    assert caught.value.fields == [
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
        ".template.spec.parallelism"
    ]
    both = trainjob({"runtimePatches": runtime_patch(POD), "podSpecOverrides": []})
    both["spec"]["podSpecOverrides"] = [{"targetJobs": [{"name": "node"}]}]
    with pytest.raises(ConfigError, match="both"):
        move_pod_field(both, "runtimePatches")
