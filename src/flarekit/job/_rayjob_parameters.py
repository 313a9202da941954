"""The parameters of a `RayJob`, as fields, and what follows from them alone.

What the checks (`_rayjob_checks`) and the rendering (`_rayjob_render`) read: kept apart from
`RayJob`, which runs them, so that they know the parameters without knowing the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Literal

import flarekit.kueue
from flarekit.cluster import ClusterConfiguration

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit.client import Client
    from flarekit_models.core.v1 import PodTemplateSpec

__all__ = ["RayJobParameters"]


@dataclass(eq=False)
class RayJobParameters:
    """The parameters of a RayJob (see `RayJob` for each one)."""

    name: str
    entrypoint: str
    _: KW_ONLY
    namespace: str | None = None
    cluster_name: str | None = None
    cluster_config: ClusterConfiguration | None = None
    runtime_env: Mapping[str, JsonValue] | None = None
    shutdown_after_finish: bool | None = None
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    local_queue: str | None = None
    priority_class: str | None = None
    no_queue: bool = False
    entrypoint_num_cpus: float | None = None
    entrypoint_num_gpus: float | None = None
    entrypoint_memory: int | None = None
    entrypoint_resources: dict[str, float] | None = None
    submission_mode: Literal["K8sJobMode", "HTTPMode"] | None = None
    submitter_pod_template: PodTemplateSpec | Mapping[str, JsonValue] | None = None
    submitter_backoff_limit: int | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    client: Client | None = field(default=None, repr=False)

    @property
    def shuts_down_cluster(self) -> bool:
        """Whether KubeRay deletes the job's cluster when the job ends."""
        if self.shutdown_after_finish is not None:
            return self.shutdown_after_finish
        return self.cluster_config is not None

    @property
    def requested_queue(self) -> str | None:
        """The LocalQueue asked for: ``local_queue`` (or Kueue's queue label among
        ``labels``), else the cluster configuration's."""
        asked = flarekit.kueue.chosen_queue(self.labels, self.local_queue)
        if asked is not None:
            return asked
        return self.cluster_config.local_queue if self.cluster_config is not None else None
