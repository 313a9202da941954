"""Conversions built from the typed models keep what the models do not know: fields neither
version declares travel where their parent exists (and come back), settings with no place in
the target are refused by path rather than dropped, and the caller's object is left alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from flarekit._validation import ConfigError
from flarekit.compat import (
    PATCH_MANAGER,
    ConversionError,
    convert,
    move_pod_field,
    pytorchjob_to_trainjob,
    trainjob_to_pytorchjob,
)
from flarekit_models.appwrapper.v1beta1 import AppWrapper as McadAppWrapper
from flarekit_models.appwrapper.v1beta2 import AppWrapper

MCAD = "workload.codeflare.dev/v1beta1"
AW = "workload.codeflare.dev/v1beta2"
KUEUE_OLD = "kueue.x-k8s.io/v1beta1"
KUEUE_NEW = "kueue.x-k8s.io/v1beta2"


def _job() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "parallelism": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                    ],
                }
            },
        },
    }


def _appwrapper() -> dict[str, Any]:
    return {
        "apiVersion": AW,
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "ns", "labels": {"team": "a"}},
        "futureTopLevel": {"a": 1},
        "spec": {
            "futureSpec": [1, 2],
            "components": [
                {
                    "futureComponent": "x",
                    "template": _job(),
                    "podSets": [
                        {"path": "template.spec.template", "replicas": 2, "futureSet": True}
                    ],
                }
            ],
        },
    }


def test_appwrapper_unknown_fields_travel_to_mcad_and_back() -> None:
    original = _appwrapper()
    mcad = convert(original, MCAD).to_dict()
    assert mcad["futureTopLevel"] == {"a": 1}
    assert mcad["metadata"] == original["metadata"]
    assert mcad["spec"]["futureSpec"] == [1, 2]
    (item,) = mcad["spec"]["resources"]["GenericItems"]
    assert item["futureComponent"] == "x"
    assert item["generictemplate"] == _job()
    assert item["custompodresources"] == [
        {"replicas": 2, "requests": {"cpu": "1"}, "futureSet": True}
    ]
    assert convert(mcad, AW).to_dict() == original


def test_an_unknown_mcad_resources_field_is_refused_by_path() -> None:
    mcad = convert(_appwrapper(), MCAD).to_dict()
    mcad["spec"]["resources"]["futureList"] = [1]
    with pytest.raises(ConversionError) as caught:
        convert(mcad, AW)
    assert caught.value.path == "spec.resources.futureList"


def test_converting_a_model_leaves_it_unchanged() -> None:
    model = AppWrapper.model_validate(_appwrapper())
    before = model.to_dict()
    mcad = convert(model, MCAD)
    assert isinstance(mcad, McadAppWrapper)
    assert mcad.metadata is not None and mcad.metadata.labels is not None
    mcad.metadata.labels["team"] = "b"
    assert model.to_dict() == before


def _pytorchjob() -> dict[str, Any]:
    pod = {"spec": {"containers": [{"name": "pytorch", "image": "trainer:1"}]}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {
            "futureSpec": {"k": "v"},
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": pod},
                "Worker": {"replicas": 1, "template": copy.deepcopy(pod)},
            },
        },
    }


def test_unknown_spec_fields_travel_between_pytorchjob_and_trainjob() -> None:
    job = _pytorchjob()
    train = pytorchjob_to_trainjob(job).to_dict()
    assert train["spec"]["futureSpec"] == {"k": "v"}
    assert train["spec"]["trainer"] == {"image": "trainer:1", "numNodes": 2}
    assert "runtimePatches" not in train["spec"]
    assert trainjob_to_pytorchjob(train).to_dict() == job


def test_a_pytorchjob_top_level_unknown_field_is_refused() -> None:
    job = {**_pytorchjob(), "futureTopLevel": 1}
    with pytest.raises(ConversionError) as caught:
        pytorchjob_to_trainjob(job)
    assert caught.value.path == "futureTopLevel"


def test_a_trainjob_top_level_unknown_field_is_carried() -> None:
    train = pytorchjob_to_trainjob(_pytorchjob()).to_dict()
    train["futureTopLevel"] = {"x": 1}
    assert trainjob_to_pytorchjob(train).to_dict()["futureTopLevel"] == {"x": 1}


def test_an_unknown_field_in_the_runtime_patch_container_is_carried() -> None:
    job = _pytorchjob()
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["template"]["spec"]["containers"][0]["volumeMounts"] = [
            {"name": "d", "mountPath": "/d"}
        ]
    train = pytorchjob_to_trainjob(job).to_dict()
    (patch,) = train["spec"]["runtimePatches"]
    (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    node["template"]["spec"]["template"]["spec"]["containers"][0]["futureKnob"] = 3
    back = trainjob_to_pytorchjob(train).to_dict()
    for replica in back["spec"]["pytorchReplicaSpecs"].values():
        assert replica["template"]["spec"]["containers"][0]["futureKnob"] == 3


def test_job_settings_in_the_runtime_patch_are_refused_going_back() -> None:
    job = _pytorchjob()
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["nodeSelector"] = {"a": "b"}
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] = {"a": "b"}
    train = pytorchjob_to_trainjob(job).to_dict()
    (patch,) = train["spec"]["runtimePatches"]
    (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    node["template"]["spec"]["parallelism"] = 2
    with pytest.raises(ConversionError) as caught:
        trainjob_to_pytorchjob(train)
    assert caught.value.path == (
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
        ".template.spec.parallelism"
    )


def _workload(version: str, assignment: dict[str, Any]) -> dict[str, Any]:
    pod_set = {
        "name": "main",
        "count": 3,
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    }
    return {
        "apiVersion": version,
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"queueName": "lq", "podSets": [pod_set]},
        "status": {
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {"name": "main", "count": 3, "topologyAssignment": assignment}
                ],
            }
        },
    }


def test_unknown_topology_assignment_fields_travel_both_ways() -> None:
    domains = [{"values": ["rack-1"], "count": 3}]
    old = _workload(KUEUE_OLD, {"levels": ["rack"], "domains": domains, "futureHint": "h"})
    new = convert(old, KUEUE_NEW).to_dict()
    assignment = new["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert assignment["futureHint"] == "h"
    assert convert(new, KUEUE_OLD).to_dict() == old


def test_an_unknown_domain_field_is_refused_by_path() -> None:
    domains = [{"values": ["rack-1"], "count": 3, "futureWeight": 2}]
    old = _workload(KUEUE_OLD, {"levels": ["rack"], "domains": domains})
    with pytest.raises(ConversionError) as caught:
        convert(old, KUEUE_NEW)
    assert caught.value.path == (
        "status.admission.podSetAssignments[0].topologyAssignment.domains[0].futureWeight"
    )


def test_a_strategy_rule_with_an_unknown_field_stays_a_strategy_and_keeps_it() -> None:
    new = {
        "apiVersion": KUEUE_NEW,
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "a", "futureX": 1}]}},
    }
    old = convert(new, KUEUE_OLD).to_dict()
    assert old["spec"] == new["spec"]
    assert convert(old, KUEUE_NEW).to_dict() == new


def _trainjob(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec},
    }


def test_a_pod_template_override_setting_with_no_other_form_is_refused() -> None:
    overrides = [{"targetJobs": [{"name": "node"}], "spec": {}, "futureMode": "x"}]
    with pytest.raises(ConfigError) as caught:
        move_pod_field(_trainjob({"podTemplateOverrides": overrides}), "runtimePatches")
    assert caught.value.fields == ["spec.podTemplateOverrides[0].futureMode"]


def test_moving_the_pod_field_leaves_the_callers_object_alone() -> None:
    pod = {"spec": {"nodeSelector": {"pool": "gpu"}}}
    patch = {
        "template": {
            "spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": pod}}}]}
        }
    }
    job = _trainjob({"runtimePatches": [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": patch}]})
    before = copy.deepcopy(job)
    moved = move_pod_field(job, "podSpecOverrides")
    assert moved["spec"]["podSpecOverrides"] == [
        {"targetJobs": [{"name": "node"}], "nodeSelector": {"pool": "gpu"}}
    ]
    assert job == before
