"""training-operator PyTorchJob <-> Trainer TrainJob on the samples, and what each refuses."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from compat_support import assert_admitted, load, sample_params

from flarekit.compat import (
    PATCH_MANAGER,
    ConversionError,
    convert,
    pytorchjob_to_trainjob,
    trainjob_to_pytorchjob,
)

RUNTIME_SETTINGS = {"restartPolicy", "imagePullPolicy"}
ELASTIC = "trainer--examples-pytorch-elastic-echo-echo-yaml--0"


def _runtime_settings(job: dict[str, Any]) -> tuple[str | None, str | None]:
    master = job["spec"]["pytorchReplicaSpecs"]["Master"]
    container = master["template"]["spec"]["containers"][0]
    return master.get("restartPolicy"), container.get("imagePullPolicy")


@pytest.mark.parametrize("path", sample_params("kubeflow.org/v1", "PyTorchJob"))
def test_pytorchjob_samples(path: Path) -> None:
    original = load(path)
    # Strict by default: the samples set a restart policy, which a TrainJob's runtime owns.
    with pytest.raises(ConversionError) as caught:
        convert(original, "trainer.kubeflow.org/v1alpha1")
    assert caught.value.path.endswith((".restartPolicy", ".imagePullPolicy"))
    if path.stem == ELASTIC:
        with pytest.raises(ConversionError) as caught:
            pytorchjob_to_trainjob(original, defer_to_runtime=RUNTIME_SETTINGS)
        assert caught.value.path == "spec.elasticPolicy"
        return
    train = pytorchjob_to_trainjob(original, defer_to_runtime=RUNTIME_SETTINGS).to_dict()
    assert_admitted(train)
    replicas = original["spec"]["pytorchReplicaSpecs"]
    assert train["spec"]["trainer"]["numNodes"] == sum(r["replicas"] for r in replicas.values())
    restart, pull = _runtime_settings(original)
    back = trainjob_to_pytorchjob(train, restart_policy=restart, image_pull_policy=pull)
    assert back.to_dict() == original


#: TrainJob samples that leave the image to the runtime or run on another runtime.
TRAINJOB_REFUSED = {
    "trainer--examples-flux-lammps-train-gpus-yaml--0": "spec.runtimeRef",
    "trainer--examples-flux-lammps-train-job-yaml--0": "spec.runtimeRef",
    "trainer--examples-yaml-02-runtime-patches-yaml--0": "spec.trainer.image",
    "trainer--examples-yaml-04-volcano-integration-yaml--1": "spec.runtimeRef",
    "trainer--examples-yaml-05-multi-step-yaml--1": "spec.runtimeRef",
}


@pytest.mark.parametrize("path", sample_params("trainer.kubeflow.org/v1alpha1", "TrainJob"))
def test_trainjob_samples(path: Path) -> None:
    original = load(path)
    if path.stem in TRAINJOB_REFUSED:
        with pytest.raises(ConversionError) as caught:
            convert(original, "kubeflow.org/v1")
        assert caught.value.path == TRAINJOB_REFUSED[path.stem]
        return
    job = convert(original, "kubeflow.org/v1").to_dict()
    assert_admitted(job)
    assert convert(job, "trainer.kubeflow.org/v1alpha1").to_dict() == original


def _pytorchjob() -> dict[str, Any]:
    pod = {
        "metadata": {"labels": {"team": "ml"}},
        "spec": {
            "containers": [
                {
                    "name": "pytorch",
                    "image": "trainer:1",
                    "command": ["torchrun", "train.py"],
                    "env": [{"name": "EPOCHS", "value": "3"}],
                    "resources": {"limits": {"nvidia.com/gpu": 2}},
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "ds"}}],
            "nodeSelector": {"gpu": "a100"},
            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {
            "nprocPerNode": "2",
            "runPolicy": {"suspend": True, "activeDeadlineSeconds": 600},
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": pod},
                "Worker": {"replicas": 3, "template": copy.deepcopy(pod)},
            },
        },
    }


def test_pod_settings_go_to_one_runtime_patch_and_come_back() -> None:
    job = _pytorchjob()
    train = convert(job, "trainer.kubeflow.org/v1alpha1").to_dict()
    spec = train["spec"]
    assert spec["runtimeRef"]["name"] == "torch-distributed"
    assert spec["trainer"] == {
        "image": "trainer:1",
        "command": ["torchrun", "train.py"],
        "env": [{"name": "EPOCHS", "value": "3"}],
        "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}},
        "numNodes": 4,
        "numProcPerNode": 2,
    }
    assert (spec["suspend"], spec["activeDeadlineSeconds"]) == (True, 600)
    (patch,) = spec["runtimePatches"]
    assert patch["manager"] == PATCH_MANAGER
    (node,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    pod = node["template"]["spec"]["template"]
    assert pod["metadata"] == {"labels": {"team": "ml"}}
    assert pod["spec"]["nodeSelector"] == {"gpu": "a100"}
    assert pod["spec"]["containers"] == [
        {"name": "node", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    ]
    assert_admitted(train)
    assert convert(train, "kubeflow.org/v1").to_dict() == job


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (
            lambda j: j["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"].update(
                nodeSelector={"gpu": "h100"}
            ),
            "spec.pytorchReplicaSpecs.Worker.template.spec.nodeSelector[gpu]",
        ),
        (
            lambda j: j["spec"]["runPolicy"].update(backoffLimit=3),
            "spec.runPolicy.backoffLimit",
        ),
        (
            lambda j: j["spec"].update(nprocPerNode="auto"),
            "spec.nprocPerNode",
        ),
        (
            lambda j: [
                r["template"]["spec"]["containers"][0].update(ports=[{"containerPort": 1}])
                for r in j["spec"]["pytorchReplicaSpecs"].values()
            ],
            "spec.pytorchReplicaSpecs.Master.template.spec.containers[0].ports",
        ),
        (
            lambda j: [
                r["template"]["spec"].update(hostNetwork=True)
                for r in j["spec"]["pytorchReplicaSpecs"].values()
            ],
            "spec.pytorchReplicaSpecs.Master.template.spec.hostNetwork",
        ),
        (
            lambda j: j["spec"]["pytorchReplicaSpecs"]["Master"].update(replicas=2),
            "spec.pytorchReplicaSpecs.Master.replicas",
        ),
    ],
)
def test_pytorchjob_refusals_name_the_field(change: Any, path: str) -> None:
    job = _pytorchjob()
    change(job)
    with pytest.raises(ConversionError) as caught:
        pytorchjob_to_trainjob(job)
    assert caught.value.path == path


def test_trainjob_refusals_name_the_field() -> None:
    train = convert(_pytorchjob(), "trainer.kubeflow.org/v1alpha1").to_dict()
    other = copy.deepcopy(train)
    other["spec"]["runtimePatches"][0]["manager"] = "example.io/team"
    with pytest.raises(ConversionError) as caught:
        trainjob_to_pytorchjob(other)
    assert caught.value.path == "spec.runtimePatches[0].manager"
    init = copy.deepcopy(train)
    init["spec"]["initializer"] = {"dataset": {"storageUri": "hf://x"}}
    with pytest.raises(ConversionError) as caught:
        trainjob_to_pytorchjob(init)
    assert caught.value.path == "spec.initializer"
    old_name = copy.deepcopy(train)
    old_name["spec"]["podSpecOverrides"] = [{"targetJobs": [{"name": "node"}]}]
    with pytest.raises(ConversionError) as caught:
        trainjob_to_pytorchjob(old_name)
    assert caught.value.path == "spec.podSpecOverrides"


def test_defer_to_runtime_takes_only_runtime_settings() -> None:
    with pytest.raises(ValueError, match="restartPolicy"):
        pytorchjob_to_trainjob(_pytorchjob(), defer_to_runtime={"ports"})
