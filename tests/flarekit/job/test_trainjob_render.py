"""TrainJob rendered offline: YAML without a cluster, and each Trainer release's pod field."""

from __future__ import annotations

from typing import Any

import yaml

from flarekit.job._trainjob import TrainJob

OPTIONS: dict[str, Any] = {
    "node_selector": {"pool": "gpu"},
    "affinity": {"nodeAffinity": {}},
    "image_pull_secrets": ["registry"],
}


def test_yaml_without_credentials_or_a_cluster() -> None:
    job = TrainJob("offline", image="example.com/t:1", num_nodes=2, local_queue="lq", **OPTIONS)
    doc = yaml.safe_load(job.to_yaml())
    assert doc["kind"] == "TrainJob"
    assert doc["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "lq"}
    assert doc["spec"]["suspend"] is True
    assert doc["spec"]["runtimePatches"][0]["manager"] == "flarekit.dev/sdk"


def test_pod_template_overrides_for_trainer_2_1() -> None:
    job = TrainJob("t", **OPTIONS)
    (entry,) = job.to_dict(pod_field="podTemplateOverrides")["spec"]["podTemplateOverrides"]
    assert entry == {
        "targetJobs": [{"name": "node"}],
        "spec": {
            "nodeSelector": {"pool": "gpu"},
            "affinity": {"nodeAffinity": {}},
            "imagePullSecrets": [{"name": "registry"}],
        },
    }
