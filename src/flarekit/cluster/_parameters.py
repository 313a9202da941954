"""The parameters of a Ray cluster, as fields, and what follows from them alone.

`ClusterParameters` is what the checks (`_checks`) and the rendering of pods (`_pod`) read;
`ClusterConfiguration` (`_config`) adds validation on construction and normalisation. Kept
apart so that the checks know the parameters without knowing the class that runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING

from flarekit._json import JsonValue
from flarekit._validation import DEFAULT_EXTENDED_RESOURCES
from flarekit.cluster._defaults import DEFAULT_IMAGE_REPOSITORY, DEFAULT_RAY_VERSION
from flarekit.cluster._worker_group import QuantityValue, WorkerGroup

if TYPE_CHECKING:
    from flarekit_models.core.v1 import PodTemplateSpec, Toleration, Volume, VolumeMount

__all__ = ["ClusterParameters"]


@dataclass
class ClusterParameters:
    """The parameters of a Ray cluster (see `ClusterConfiguration` for each one)."""

    name: str
    _: KW_ONLY
    namespace: str | None = None
    image: str | None = None
    ray_version: str | None = None

    head_cpu_requests: QuantityValue | None = 2
    head_cpu_limits: QuantityValue | None = 2
    head_memory_requests: QuantityValue | None = 8
    head_memory_limits: QuantityValue | None = 8
    head_extended_resource_requests: dict[str, int | str] = field(default_factory=dict)
    head_tolerations: list[Toleration | Mapping[str, JsonValue]] = field(default_factory=list)
    head_node_selector: dict[str, str] = field(default_factory=dict)
    head_pod_template: PodTemplateSpec | Mapping[str, JsonValue] | None = None

    num_workers: int = 1
    min_workers: int | None = None
    max_workers: int | None = None
    worker_cpu_requests: QuantityValue | None = 1
    worker_cpu_limits: QuantityValue | None = 1
    worker_memory_requests: QuantityValue | None = 2
    worker_memory_limits: QuantityValue | None = 2
    worker_extended_resource_requests: dict[str, int | str] = field(default_factory=dict)
    worker_tolerations: list[Toleration | Mapping[str, JsonValue]] = field(default_factory=list)
    worker_node_selector: dict[str, str] = field(default_factory=dict)
    worker_pod_template: PodTemplateSpec | Mapping[str, JsonValue] | None = None
    worker_group_name: str = "workers"
    worker_groups: list[WorkerGroup] = field(default_factory=list)

    extended_resource_mapping: dict[str, str] = field(default_factory=dict)
    enable_autoscaling: bool = False
    autoscaler_idle_timeout_seconds: int | None = None

    envs: dict[str, str] = field(default_factory=dict)
    volumes: list[Volume | Mapping[str, JsonValue]] = field(default_factory=list)
    volume_mounts: list[VolumeMount | Mapping[str, JsonValue]] = field(default_factory=list)
    image_pull_secrets: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    local_queue: str | None = None
    priority_class: str | None = None
    appwrapper: bool = False

    enable_gcs_ft: bool = False
    redis_address: str | None = None
    redis_password_secret: dict[str, str] | None = None
    external_storage_namespace: str | None = None

    @property
    def resource_mapping(self) -> dict[str, str]:
        """Every known extended resource and its Ray resource: built-ins, then the user's."""
        return {**DEFAULT_EXTENDED_RESOURCES, **self.extended_resource_mapping}

    @property
    def effective_image(self) -> str:
        """The image Ray nodes run: ``image`` (set on construction), else the default."""
        return self.image or f"{DEFAULT_IMAGE_REPOSITORY}:{self.ray_version or DEFAULT_RAY_VERSION}"

    def main_worker_group(self) -> WorkerGroup:
        """The ``worker_*`` parameters as a :class:`WorkerGroup`."""
        return WorkerGroup(
            self.worker_group_name,
            num_workers=self.num_workers,
            min_workers=self.min_workers,
            max_workers=self.max_workers,
            cpu_requests=self.worker_cpu_requests,
            cpu_limits=self.worker_cpu_limits,
            memory_requests=self.worker_memory_requests,
            memory_limits=self.worker_memory_limits,
            extended_resource_requests=self.worker_extended_resource_requests,
            tolerations=self.worker_tolerations,
            node_selector=self.worker_node_selector,
            pod_template=self.worker_pod_template,
        )

    def all_worker_groups(self) -> list[WorkerGroup]:
        """The main worker group, then ``worker_groups``."""
        return [self.main_worker_group(), *self.worker_groups]
