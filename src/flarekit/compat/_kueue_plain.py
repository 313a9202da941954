"""Kueue kinds whose v1beta1 and v1beta2 share one shape.

ResourceFlavor, WorkloadPriorityClass, Topology, Cohort and ProvisioningRequestConfig differ
only in validation bounds (v1beta2 adds maximum lengths and list types, which the target
model checks), and Cohort's status in v1beta1-only ``fairSharing.admissionFairSharingStatus``
(refused by name). MultiKueueConfig gains ``spec.quotaManagement`` in v1beta2 (refused going
back). Everything else is carried as is.
"""

from __future__ import annotations

from flarekit.compat._kueue_versions import pair
from flarekit.compat._reshape import Reshape
from flarekit_models import KubeResource, resource_model

__all__ = ["PLAIN_KINDS", "plain_conversions"]

PLAIN_KINDS = (
    "Cohort",
    "MultiKueueConfig",
    "ProvisioningRequestConfig",
    "ResourceFlavor",
    "Topology",
    "WorkloadPriorityClass",
)


def plain_conversions() -> list[Reshape[KubeResource, KubeResource]]:
    """Both directions for every kind in :data:`PLAIN_KINDS`."""
    out: list[Reshape[KubeResource, KubeResource]] = []
    for kind in PLAIN_KINDS:
        old, new = (resource_model(*versioned) for versioned in pair(kind))
        out += [Reshape(old, new), Reshape(new, old)]
    return out
