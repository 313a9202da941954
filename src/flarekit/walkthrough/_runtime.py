"""The ``torch-distributed`` ClusterTrainingRuntime a platform admin installs for the walkthrough.

Why: a TrainJob starts from a runtime, and Kubeflow Trainer's installation normally brings
some. The practice cluster has no Trainer installation, so the walkthrough creates one the way
an admin would: one replicated job ``node`` (the trainer, running torchrun on every node) from
a PyTorch image, with the torch ML policy (one node unless the TrainJob asks for more).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flarekit._json import JsonObject

__all__ = ["RUNTIME_IMAGE", "RUNTIME_NAME", "torch_distributed_runtime"]

RUNTIME_NAME = "torch-distributed"
#: The image the runtime's trainer runs when the TrainJob names none.
RUNTIME_IMAGE = "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"
#: Trainer marks the replicated job whose pods the TrainJob's `trainer` settings fill in.
_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def torch_distributed_runtime(
    name: str = RUNTIME_NAME, image: str = RUNTIME_IMAGE, labels: dict[str, str] | None = None
) -> JsonObject:
    """The ClusterTrainingRuntime as Kubernetes JSON (``trainer.kubeflow.org/v1alpha1``)."""
    trainer_pod: JsonObject = {
        "containers": [
            {
                "name": "node",
                "image": image,
                "command": ["torchrun", "/workspace/train.py"],
                "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}],
                "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
            }
        ]
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {
            "name": name,
            "labels": {"trainer.kubeflow.org/framework": "torch", **(labels or {})},
        },
        "spec": {
            # Processes per node are the TrainJob's to set (Trainer 2.3 has no runtime field).
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {_ANCESTOR: "trainer"}},
                                "spec": {"template": {"spec": trainer_pod}},
                            },
                        }
                    ]
                }
            },
        },
    }
