"""What a TrainJob leaves to its runtime, as the PyTorchJob <-> TrainJob conversions assume it.

A TrainJob names a runtime (``spec.runtimeRef``) that supplies the JobSet: Trainer's
``torch-distributed`` ClusterTrainingRuntime runs one replicated job named ``node`` whose
container is ``node``. A PyTorchJob carries all of that itself (Master and Worker replica
specs, container ``pytorch``). Pod customisation goes into ``spec.runtimePatches`` (Trainer
v2.2+; ``podSpecOverrides`` in v2.0 and ``podTemplateOverrides`` in v2.1 are not written),
as one patch owned by :data:`PATCH_MANAGER`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "CONTAINER",
    "CONTAINER_PATCH_FIELDS",
    "JOB",
    "PATCH_MANAGER",
    "POD_PATCH_FIELDS",
    "PYTORCH",
    "PYTORCH_CONTAINER",
    "TORCH_DISTRIBUTED",
    "TRAINJOB",
    "normalized_ref",
]

PYTORCH = ("kubeflow.org/v1", "PyTorchJob")
TRAINJOB = ("trainer.kubeflow.org/v1alpha1", "TrainJob")

#: The runtime a converted PyTorchJob refers to unless the caller names another.
TORCH_DISTRIBUTED: Mapping[str, str] = {
    "apiGroup": "trainer.kubeflow.org",
    "kind": "ClusterTrainingRuntime",
    "name": "torch-distributed",
}
JOB = "node"
CONTAINER = "node"
PYTORCH_CONTAINER = "pytorch"
PATCH_MANAGER = "flarekit.dev/compat"

#: Pod spec fields a runtime patch can set (Trainer v2.3.0's TrainJob schema).
POD_PATCH_FIELDS = frozenset(
    {
        "affinity",
        "imagePullSecrets",
        "nodeSelector",
        "schedulingGates",
        "securityContext",
        "serviceAccountName",
        "terminationGracePeriodSeconds",
        "tolerations",
        "volumes",
    }
)
#: Container fields a runtime patch can set besides ``name`` (``env`` goes to ``spec.trainer``).
CONTAINER_PATCH_FIELDS = frozenset({"securityContext", "volumeMounts"})


def normalized_ref(ref: Mapping[str, Any]) -> dict[str, Any]:
    """A runtimeRef with the CRD's defaults filled in, for comparing two of them."""
    return {
        "apiGroup": ref.get("apiGroup", "trainer.kubeflow.org"),
        "kind": ref.get("kind", "ClusterTrainingRuntime"),
        **{k: v for k, v in ref.items() if k not in ("apiGroup", "kind")},
    }
