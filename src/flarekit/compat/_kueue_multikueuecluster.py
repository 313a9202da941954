"""MultiKueueCluster between Kueue v1beta1 and v1beta2.

v1beta2 groups the way to reach the worker cluster under ``spec.clusterSource`` (exactly one
of ``kubeConfig`` and ``clusterProfileRef``); v1beta1 has both at ``spec`` and requires
``spec.kubeConfig``. So a v1beta1 object setting both, and a v1beta2 object reaching its
cluster through a ClusterProfile, are refused.
"""

from __future__ import annotations

from typing import Any

from flarekit.compat._engine import Context, get
from flarekit.compat._kueue_versions import pair
from flarekit.compat._reshape import Reshape

__all__ = ["multikueuecluster_v1beta1_to_v1beta2", "multikueuecluster_v1beta2_to_v1beta1"]

_V1BETA1, _V1BETA2 = pair("MultiKueueCluster")


def _one_source(data: dict[str, Any], ctx: Context) -> None:
    if get(data, "spec.kubeConfig") is not None and get(data, "spec.clusterProfileRef"):
        ctx.refuse(
            "spec.clusterProfileRef",
            "spec.kubeConfig is set as well; v1beta2 takes exactly one of them "
            "(spec.clusterSource.kubeConfig or spec.clusterSource.clusterProfileRef)",
        )


def _needs_kubeconfig(data: dict[str, Any], ctx: Context) -> None:
    if get(data, "spec.clusterSource.clusterProfileRef") is not None:
        ctx.refuse(
            "spec.clusterSource.clusterProfileRef",
            "v1beta1 requires spec.kubeConfig; a cluster reached through a ClusterProfile "
            "has no v1beta1 form",
        )


multikueuecluster_v1beta1_to_v1beta2 = Reshape(
    _V1BETA1,
    _V1BETA2,
    moves=(
        ("spec.kubeConfig", "spec.clusterSource.kubeConfig"),
        ("spec.clusterProfileRef", "spec.clusterSource.clusterProfileRef"),
    ),
    hooks=(_one_source,),
)
multikueuecluster_v1beta2_to_v1beta1 = Reshape(
    _V1BETA2,
    _V1BETA1,
    moves=(("spec.clusterSource.kubeConfig", "spec.kubeConfig"),),
    hooks=(_needs_kubeconfig,),
)
