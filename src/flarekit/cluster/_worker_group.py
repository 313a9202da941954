"""`WorkerGroup`: an extra group of Ray workers in a cluster configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING

from flarekit._json import JsonValue
from flarekit.cluster._names import suggest_names

if TYPE_CHECKING:
    from flarekit_models.core.v1 import PodTemplateSpec, Toleration

__all__ = ["QuantityValue", "WorkerGroup"]

#: CPU and memory amounts: ``2``, ``0.5``, ``"500m"``, ``"8Gi"``.
QuantityValue = int | float | str


@suggest_names
@dataclass
class WorkerGroup:
    """An additional group of Ray workers, e.g. GPU workers beside CPU workers.

    Fields mean what the ``worker_*`` parameters of :class:`ClusterConfiguration` mean for
    the main group. It is validated as part of the configuration that holds it (its
    problems are reported as ``worker_groups[i].<field>``).
    """

    name: str
    _: KW_ONLY
    num_workers: int = 1
    #: Autoscaling bounds; ``None`` means ``num_workers``.
    min_workers: int | None = None
    max_workers: int | None = None
    cpu_requests: QuantityValue | None = 1
    cpu_limits: QuantityValue | None = 1
    #: A bare number is gigabytes (``2`` -> ``"2G"``).
    memory_requests: QuantityValue | None = 2
    memory_limits: QuantityValue | None = 2
    extended_resource_requests: dict[str, int | str] = field(default_factory=dict)
    #: ``None``: the cluster's image.
    image: str | None = None
    tolerations: list[Toleration | Mapping[str, JsonValue]] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    #: Environment variables of this group's Ray containers, over the cluster's ``envs``
    #: (a name in both takes this group's value).
    envs: dict[str, str] = field(default_factory=dict)
    #: Labels on this group's pods (not on the RayCluster: that is the cluster's ``labels``).
    labels: dict[str, str] = field(default_factory=dict)
    #: The rest of this group's pods (affinity, ``serviceAccountName``, sidecars, ...): a
    #: ``flarekit_models.core.v1.PodTemplateSpec`` or its Kubernetes JSON, merged into what
    #: the other fields render (see ``ClusterConfiguration``'s ``worker_pod_template``).
    pod_template: PodTemplateSpec | Mapping[str, JsonValue] | None = None
