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
from typing import TYPE_CHECKING, Protocol

from flarekit._json import JsonValue

if TYPE_CHECKING:
    from flarekit_models.core.v1 import (
        Affinity,
        LocalObjectReference,
        PodSchedulingGate,
        PodSecurityContext,
        Toleration,
        Volume,
    )
    from flarekit_models.trainer.v1alpha1 import RuntimeRef

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
    "PodSettings",
    "copy_pod_settings",
    "same_runtime",
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

#: Pod spec fields a runtime patch can set (Trainer v2.3.0's TrainJob schema), as JSON names;
#: :func:`copy_pod_settings` copies them between the two shapes.
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


class PodSettings(Protocol):
    """The pod settings a PyTorchJob's pod spec and a TrainJob's runtime patch share."""

    affinity: Affinity | None
    image_pull_secrets: list[LocalObjectReference] | None
    node_selector: dict[str, str] | None
    scheduling_gates: list[PodSchedulingGate] | None
    security_context: PodSecurityContext | None
    service_account_name: str | None
    termination_grace_period_seconds: int | None
    tolerations: list[Toleration] | None
    volumes: list[Volume] | None


def copy_pod_settings(source: PodSettings, target: PodSettings) -> None:
    """Set on `target` each of :data:`POD_PATCH_FIELDS` that `source` sets."""
    if source.affinity is not None:
        target.affinity = source.affinity
    if source.image_pull_secrets is not None:
        target.image_pull_secrets = source.image_pull_secrets
    if source.node_selector is not None:
        target.node_selector = source.node_selector
    if source.scheduling_gates is not None:
        target.scheduling_gates = source.scheduling_gates
    if source.security_context is not None:
        target.security_context = source.security_context
    if source.service_account_name is not None:
        target.service_account_name = source.service_account_name
    if source.termination_grace_period_seconds is not None:
        target.termination_grace_period_seconds = source.termination_grace_period_seconds
    if source.tolerations is not None:
        target.tolerations = source.tolerations
    if source.volumes is not None:
        target.volumes = source.volumes


def same_runtime(ref: RuntimeRef, other: RuntimeRef) -> bool:
    """Whether two runtimeRefs name the same runtime (the CRD's defaults filled in)."""

    def normalized(r: RuntimeRef) -> tuple[str, str, str, dict[str, JsonValue]]:
        group = r.api_group if r.api_group is not None else "trainer.kubeflow.org"
        kind = r.kind if r.kind is not None else "ClusterTrainingRuntime"
        return group, kind, r.name, dict(r.model_extra or {})

    return normalized(ref) == normalized(other)
