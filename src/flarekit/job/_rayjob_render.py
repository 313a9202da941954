"""A :class:`~flarekit.job.RayJob`'s parameters as the KubeRay ``RayJob`` object, and back.

The job-owned cluster is the ``spec`` of the RayCluster that :mod:`flarekit.cluster` renders
for the configuration, so a cluster in a RayJob and a standalone one are built the same way.
Kueue reads the queue and priority labels from the RayJob (it skips the RayCluster KubeRay
creates for it, which the job owns), and a queued RayJob is created suspended: Kueue starts
it by clearing ``spec.suspend`` once its Workload is admitted.

The runtime environment goes in ``runtimeEnvYAML`` and the entrypoint's custom resources in
``entrypointResources`` as JSON text, the forms KubeRay passes on to ``ray job submit``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

import flarekit.cluster
import flarekit.kueue
from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit._validation import ConfigError
from flarekit._yaml import dump_yaml
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit._json import JsonObject, JsonValue
    from flarekit.cluster import ClusterConfiguration
    from flarekit.job._rayjob_parameters import RayJobParameters
    from flarekit_models.ray.v1 import RayJob as RayJobModel

__all__ = ["CLUSTER_LABEL", "rayjob_model", "read_params"]

#: The label KubeRay's ``clusterSelector`` matches to run a job on an existing RayCluster.
CLUSTER_LABEL = "ray.io/cluster"


def _yaml(value: Mapping[str, JsonValue]) -> str:
    return dump_yaml(dict(value), sort_keys=True)


def _pod_template(
    template: core_v1.PodTemplateSpec | Mapping[str, JsonValue],
) -> core_v1.PodTemplateSpec:
    """A copy of the submitter pod template as a model (a model given is not shared)."""
    data = template.to_dict() if isinstance(template, core_v1.PodTemplateSpec) else dict(template)
    return core_v1.PodTemplateSpec.model_validate(data)


def rayjob_model(
    job: RayJobParameters, *, namespace: str | None, queue: str | None
) -> ray_v1.RayJob:
    """The RayJob as a typed model; ``queue`` is the LocalQueue to label it with (None:
    not queued), ``namespace`` where it goes (None: left to the client)."""
    config = job.cluster_config
    labels = dict(job.labels)
    priority = flarekit.kueue.chosen_priority(job.labels, job.priority_class) or (
        config.priority_class if config is not None else None
    )
    if queue is not None:
        labels[QUEUE_LABEL] = queue
    if priority is not None:
        labels[PRIORITY_LABEL] = priority
    metadata = meta_v1.ObjectMeta(name=job.name)
    if namespace:
        metadata.namespace = namespace
    if labels:
        metadata.labels = labels
    if job.annotations:
        metadata.annotations = dict(job.annotations)

    spec = ray_v1.RayJobSpec(
        entrypoint=job.entrypoint, shutdown_after_job_finishes=job.shuts_down_cluster
    )
    if job.runtime_env:
        spec.runtime_env_yaml = _yaml(job.runtime_env)
    if job.ttl_seconds_after_finished is not None:
        spec.ttl_seconds_after_finished = job.ttl_seconds_after_finished
    if job.active_deadline_seconds is not None:
        spec.active_deadline_seconds = job.active_deadline_seconds
    if job.entrypoint_num_cpus is not None:
        spec.entrypoint_num_cpus = job.entrypoint_num_cpus
    if job.entrypoint_num_gpus is not None:
        spec.entrypoint_num_gpus = job.entrypoint_num_gpus
    if job.submission_mode is not None:
        spec.submission_mode = job.submission_mode
    if job.entrypoint_resources:
        spec.entrypoint_resources = json.dumps(dict(job.entrypoint_resources), sort_keys=True)
    if job.submitter_pod_template is not None:
        spec.submitter_pod_template = _pod_template(job.submitter_pod_template)
    if job.submitter_backoff_limit is not None:
        spec.submitter_config = ray_v1.SubmitterConfig(backoff_limit=job.submitter_backoff_limit)
    if job.cluster_name is not None:
        spec.cluster_selector = {CLUSTER_LABEL: job.cluster_name}
    elif config is not None:
        spec.ray_cluster_spec = flarekit.cluster.render_raycluster(config).spec
    if queue is not None:
        spec.suspend = True
    return ray_v1.RayJob(metadata=metadata, spec=spec)


def _runtime_env(text: str | None) -> JsonObject | None:
    import yaml

    if not text or not text.strip():
        return None
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return dict(value) if isinstance(value, Mapping) else None


def _resources(text: str | None) -> JsonObject | None:
    if not text or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return dict(value) if isinstance(value, Mapping) else None


def _cluster_config(obj: RayJobModel, name: str) -> ClusterConfiguration | None:
    """The job's ``rayClusterSpec`` as a configuration (None: it has none, or one that a
    configuration cannot express)."""
    spec = obj.spec.ray_cluster_spec if obj.spec is not None else None
    if spec is None or not spec.to_dict():
        return None
    try:
        return flarekit.cluster.from_raycluster(
            ray_v1.RayCluster(metadata=meta_v1.ObjectMeta(name=name), spec=spec)
        )
    except (ConfigError, ValueError):
        return None  # holds what a ClusterConfiguration cannot express


def read_params(obj: ray_v1.RayJob) -> dict[str, object]:
    """The RayJob parameters a ``RayJob`` object expresses, by name.

    What cannot be expressed is left out: a ``rayClusterSpec`` that a
    :class:`~flarekit.cluster.ClusterConfiguration` refuses reads as ``cluster_config=None``.
    """
    metadata = obj.metadata
    spec = obj.spec if obj.spec is not None else ray_v1.RayJobSpec()
    labels = dict(metadata.labels or {}) if metadata is not None else {}
    name = (metadata.name if metadata is not None else None) or ""
    template = spec.submitter_pod_template
    return {
        "name": name,
        "entrypoint": spec.entrypoint or "",
        "namespace": metadata.namespace if metadata is not None else None,
        "cluster_name": (spec.cluster_selector or {}).get(CLUSTER_LABEL),
        "cluster_config": _cluster_config(obj, name),
        "runtime_env": _runtime_env(spec.runtime_env_yaml),
        "shutdown_after_finish": spec.shutdown_after_job_finishes,
        "ttl_seconds_after_finished": spec.ttl_seconds_after_finished,
        "active_deadline_seconds": spec.active_deadline_seconds,
        "local_queue": labels.pop(QUEUE_LABEL, None),
        "priority_class": labels.pop(PRIORITY_LABEL, None),
        "entrypoint_num_cpus": spec.entrypoint_num_cpus,
        "entrypoint_num_gpus": spec.entrypoint_num_gpus,
        "entrypoint_resources": _resources(spec.entrypoint_resources),
        "submission_mode": spec.submission_mode,
        "submitter_pod_template": template.to_dict() if template is not None else None,
        "submitter_backoff_limit": (
            spec.submitter_config.backoff_limit if spec.submitter_config is not None else None
        ),
        "labels": labels,
        "annotations": dict(metadata.annotations or {}) if metadata is not None else {},
    }
