"""DistributedJob's node selector and tolerations, offline: on every pod of every target,
checked with the other options, and refused for a job on a running Ray cluster."""

from __future__ import annotations

from typing import Any

import pytest

from flarekit._validation import ConfigError
from flarekit.job._distributed import DistributedJob

SELECTOR = {"node.kubernetes.io/instance-type": "gpu-a100"}
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def job(**kwargs: Any) -> DistributedJob:
    return DistributedJob(
        "train", script="train.py", image="pytorch/pytorch:2.5.1", j="2x1",
        node_selector=SELECTOR, tolerations=[TOLERATION], **kwargs,
    )  # fmt: skip


@pytest.mark.parametrize("appwrapper", [False, True])
def test_every_pytorchjob_pod_gets_them(appwrapper: bool) -> None:
    body = job(appwrapper=appwrapper).to_pytorchjob()
    if appwrapper:
        body = body["spec"]["components"][0]["template"]
    for replica in body["spec"]["pytorchReplicaSpecs"].values():
        pod = replica["template"]["spec"]
        assert pod["nodeSelector"] == SELECTOR
        assert pod["tolerations"] == [TOLERATION]


def test_the_trainjob_gets_them() -> None:
    train = job().to_trainjob()
    assert train.pod.node_selector == SELECTOR
    assert [t.to_dict() for t in train.pod.tolerations] == [TOLERATION]


def test_bad_values_are_reported_with_the_others() -> None:
    with pytest.raises(ConfigError) as caught:
        DistributedJob(
            "train", script="train.py", j="0x1",
            node_selector={"bad key!": "x"}, tolerations=[{"key": "k", "tolerationSeconds": "soon"}],
        )  # fmt: skip
    fields = caught.value.fields
    assert "j" in fields
    assert any(f.startswith("node_selector") for f in fields)
    assert any(f.startswith("tolerations[0]") for f in fields)


def test_a_job_on_a_running_ray_cluster_refuses_them() -> None:
    with pytest.raises(ConfigError) as caught:
        job().submit("http://127.0.0.1:1")
    assert caught.value.fields == ["node_selector", "tolerations"]
