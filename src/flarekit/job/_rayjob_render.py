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
from typing import TYPE_CHECKING, Any

from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL

if TYPE_CHECKING:
    from flarekit.job._rayjob import RayJob

__all__ = ["CLUSTER_LABEL", "rayjob_dict", "read_params"]

#: The label KubeRay's ``clusterSelector`` matches to run a job on an existing RayCluster.
CLUSTER_LABEL = "ray.io/cluster"


def _yaml(value: Mapping[str, Any]) -> str:
    import yaml

    text: str = yaml.safe_dump(dict(value), default_flow_style=False, sort_keys=True)
    return text


def _dumped(value: Any) -> dict[str, Any]:
    return dict(value.to_dict()) if hasattr(value, "to_dict") else dict(value)


def rayjob_dict(job: RayJob, *, namespace: str | None, queue: str | None) -> dict[str, Any]:
    """The RayJob as Kubernetes JSON; ``queue`` is the LocalQueue to label it with (None:
    not queued), ``namespace`` where it goes (None: left to the client)."""
    from flarekit.cluster._render import render_raycluster
    from flarekit.kueue._queues import chosen_priority

    config = job.cluster_config
    labels = dict(job.labels)
    priority = chosen_priority(job.labels, job.priority_class) or (
        config.priority_class if config is not None else None
    )
    if queue is not None:
        labels[QUEUE_LABEL] = queue
    if priority is not None:
        labels[PRIORITY_LABEL] = priority
    metadata: dict[str, Any] = {"name": job.name}
    if namespace:
        metadata["namespace"] = namespace
    if labels:
        metadata["labels"] = labels
    if job.annotations:
        metadata["annotations"] = dict(job.annotations)

    spec: dict[str, Any] = {"entrypoint": job.entrypoint}
    if job.runtime_env:
        spec["runtimeEnvYAML"] = _yaml(job.runtime_env)
    spec["shutdownAfterJobFinishes"] = job.shuts_down_cluster
    optional = {
        "ttlSecondsAfterFinished": job.ttl_seconds_after_finished,
        "activeDeadlineSeconds": job.active_deadline_seconds,
        "entrypointNumCpus": job.entrypoint_num_cpus,
        "entrypointNumGpus": job.entrypoint_num_gpus,
        "submissionMode": job.submission_mode,
    }
    spec.update({k: v for k, v in optional.items() if v is not None})
    if job.entrypoint_resources:
        spec["entrypointResources"] = json.dumps(dict(job.entrypoint_resources), sort_keys=True)
    if job.submitter_pod_template is not None:
        spec["submitterPodTemplate"] = _dumped(job.submitter_pod_template)
    if job.submitter_backoff_limit is not None:
        spec["submitterConfig"] = {"backoffLimit": job.submitter_backoff_limit}
    if job.cluster_name is not None:
        spec["clusterSelector"] = {CLUSTER_LABEL: job.cluster_name}
    elif config is not None:
        spec["rayClusterSpec"] = render_raycluster(config).to_dict()["spec"]
    if queue is not None:
        spec["suspend"] = True
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": metadata, "spec": spec}


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _runtime_env(text: Any) -> dict[str, Any] | None:
    import yaml

    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return dict(value) if isinstance(value, Mapping) else None


def _resources(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return dict(value) if isinstance(value, Mapping) else None


def _cluster_config(name: str, spec: Mapping[str, Any]) -> Any:
    from flarekit._validation import ConfigError
    from flarekit.cluster._read import from_raycluster

    try:
        return from_raycluster({"kind": "RayCluster", "metadata": {"name": name}, "spec": spec})
    except (ConfigError, ValueError):
        return None  # holds what a ClusterConfiguration cannot express


def read_params(obj: Any) -> dict[str, Any]:
    """The RayJob parameters a ``RayJob`` object (a model or its JSON) expresses.

    What cannot be expressed is left out: a ``rayClusterSpec`` that a
    :class:`~flarekit.cluster.ClusterConfiguration` refuses reads as ``cluster_config=None``.
    """
    data = obj.to_dict() if hasattr(obj, "to_dict") else _map(obj)
    metadata, spec = _map(data.get("metadata")), _map(data.get("spec"))
    labels = _map(metadata.get("labels"))
    selector = _map(spec.get("clusterSelector"))
    name = str(metadata.get("name") or "")
    cluster_spec = _map(spec.get("rayClusterSpec"))
    template = spec.get("submitterPodTemplate")
    return {
        "name": name,
        "entrypoint": spec.get("entrypoint") or "",
        "namespace": metadata.get("namespace"),
        "cluster_name": selector.get(CLUSTER_LABEL),
        "cluster_config": _cluster_config(name, cluster_spec) if cluster_spec else None,
        "runtime_env": _runtime_env(spec.get("runtimeEnvYAML")),
        "shutdown_after_finish": spec.get("shutdownAfterJobFinishes"),
        "ttl_seconds_after_finished": spec.get("ttlSecondsAfterFinished"),
        "active_deadline_seconds": spec.get("activeDeadlineSeconds"),
        "local_queue": labels.pop(QUEUE_LABEL, None),
        "priority_class": labels.pop(PRIORITY_LABEL, None),
        "entrypoint_num_cpus": spec.get("entrypointNumCpus"),
        "entrypoint_num_gpus": spec.get("entrypointNumGpus"),
        "entrypoint_resources": _resources(spec.get("entrypointResources")),
        "submission_mode": spec.get("submissionMode"),
        "submitter_pod_template": dict(template) if isinstance(template, Mapping) else None,
        "submitter_backoff_limit": _map(spec.get("submitterConfig")).get("backoffLimit"),
        "labels": labels,
        "annotations": _map(metadata.get("annotations")),
    }
