"""MultiKueueCluster between Kueue v1beta1 and v1beta2.

v1beta2 groups the way to reach the worker cluster under ``spec.clusterSource`` (exactly one
of ``kubeConfig`` and ``clusterProfileRef``); v1beta1 has both at ``spec`` and requires
``spec.kubeConfig``. So a v1beta1 object setting both, and a v1beta2 object reaching its
cluster through a ClusterProfile, are refused.
"""

from __future__ import annotations

from flarekit.compat._engine import Context
from flarekit.compat._reshape import Reshape
from flarekit_models.kueue import v1beta1, v1beta2

__all__ = ["multikueuecluster_v1beta1_to_v1beta2", "multikueuecluster_v1beta2_to_v1beta1"]


def _one_source(source: v1beta1.MultiKueueCluster, ctx: Context) -> None:
    spec = source.spec
    if spec is not None and spec.cluster_profile_ref is not None:  # kubeConfig is required
        ctx.refuse(
            "spec.clusterProfileRef",
            "spec.kubeConfig is set as well; v1beta2 takes exactly one of them "
            "(spec.clusterSource.kubeConfig or spec.clusterSource.clusterProfileRef)",
        )


def _needs_kubeconfig(source: v1beta2.MultiKueueCluster, ctx: Context) -> None:
    cluster = source.spec.cluster_source if source.spec else None
    if cluster is not None and cluster.cluster_profile_ref is not None:
        ctx.refuse(
            "spec.clusterSource.clusterProfileRef",
            "v1beta1 requires spec.kubeConfig; a cluster reached through a ClusterProfile "
            "has no v1beta1 form",
        )


multikueuecluster_v1beta1_to_v1beta2 = Reshape(
    v1beta1.MultiKueueCluster,
    v1beta2.MultiKueueCluster,
    moves=(
        ("spec.kubeConfig", "spec.clusterSource.kubeConfig"),
        ("spec.clusterProfileRef", "spec.clusterSource.clusterProfileRef"),
    ),
    checks=(_one_source,),
)
multikueuecluster_v1beta2_to_v1beta1 = Reshape(
    v1beta2.MultiKueueCluster,
    v1beta1.MultiKueueCluster,
    moves=(("spec.clusterSource.kubeConfig", "spec.kubeConfig"),),
    checks=(_needs_kubeconfig,),
)
