"""RayCluster from KubeRay's ray.io/v1alpha1 to ray.io/v1.

KubeRay serves both versions from one schema (no conversion webhook): v1 is v1alpha1 plus
fields added since (and ``rayStartParams`` no longer required), so every v1alpha1 object is
a v1 object with another apiVersion. The shared checks still refuse any field v1 does not
declare. There is no v1 -> v1alpha1 conversion: v1alpha1 is deprecated and only read.
"""

from __future__ import annotations

from flarekit.compat._reshape import Reshape
from flarekit_models.ray import v1, v1alpha1

__all__ = ["raycluster_v1alpha1_to_v1"]

raycluster_v1alpha1_to_v1 = Reshape(v1alpha1.RayCluster, v1.RayCluster)
