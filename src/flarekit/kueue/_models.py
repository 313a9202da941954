"""The Kueue model classes of the version the connected cluster serves.

Why: Kueue v0.15 introduced ``kueue.x-k8s.io/v1beta2`` (and renamed some fields); older
releases serve only ``v1beta1``. Everything in :mod:`flarekit.kueue` reads and writes the
version the client found served, through the generated models of that version.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Literal, overload

import flarekit.client
from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit_models.kueue import v1beta1 as kueue_v1beta1
from flarekit_models.kueue import v1beta2 as kueue_v1beta2

if TYPE_CHECKING:
    from typing import TypeAlias

    from flarekit.client import Client, KueueVersion
    from flarekit_models import KubeResource
    from flarekit_models.kueue import v1beta1, v1beta2

    #: The kinds flarekit reads in either served version: code that uses them is checked
    #: against both (a field one version renamed is a type error).
    Workload: TypeAlias = v1beta1.Workload | v1beta2.Workload
    LocalQueue: TypeAlias = v1beta1.LocalQueue | v1beta2.LocalQueue
    ClusterQueue: TypeAlias = v1beta1.ClusterQueue | v1beta2.ClusterQueue
    ResourceFlavor: TypeAlias = v1beta1.ResourceFlavor | v1beta2.ResourceFlavor
    WorkloadPriorityClass: TypeAlias = v1beta1.WorkloadPriorityClass | v1beta2.WorkloadPriorityClass

__all__ = ["PRIORITY_LABEL", "QUEUE_LABEL", "kueue_model", "kueue_module"]


def kueue_module(version: KueueVersion | Client) -> ModuleType:
    """``flarekit_models.kueue.<version>`` for a version, or for the version a client's
    cluster serves."""
    chosen = (
        version if isinstance(version, str) else flarekit.client.preferred_kueue_version(version)
    )
    return kueue_v1beta2 if chosen == "v1beta2" else kueue_v1beta1


@overload
def kueue_model(version: KueueVersion | Client, name: Literal["Workload"]) -> type[Workload]: ...
@overload
def kueue_model(
    version: KueueVersion | Client, name: Literal["LocalQueue"]
) -> type[LocalQueue]: ...
@overload
def kueue_model(
    version: KueueVersion | Client, name: Literal["ClusterQueue"]
) -> type[ClusterQueue]: ...
@overload
def kueue_model(
    version: KueueVersion | Client, name: Literal["ResourceFlavor"]
) -> type[ResourceFlavor]: ...
@overload
def kueue_model(
    version: KueueVersion | Client, name: Literal["WorkloadPriorityClass"]
) -> type[WorkloadPriorityClass]: ...
@overload
def kueue_model(version: KueueVersion | Client, name: str) -> type[KubeResource]: ...
def kueue_model(version: KueueVersion | Client, name: str) -> type[KubeResource]:
    """The resource class of kind `name` (``"LocalQueue"``, ...) of that version."""
    model: type[KubeResource] = getattr(kueue_module(version), name)
    return model
