"""Turn a :class:`ClusterConfiguration` into KubeRay objects, offline.

:func:`render_raycluster` builds a ``RayCluster`` (ray.io/v1): a head group and one worker
group per :class:`WorkerGroup`, container resources from the CPU / memory / device
parameters, and ``rayStartParams`` telling Ray about the devices (``num-gpus``, and
``resources`` as the shell-quoted JSON KubeRay passes to ``ray start``). With
``appwrapper=True``, :func:`render` wraps it in an ``AppWrapper``
(workload.codeflare.dev/v1beta2), whose ``spec.components[0].template`` holds the
RayCluster.

Kueue reads the queue (``kueue.x-k8s.io/queue-name``) and priority class
(``kueue.x-k8s.io/priority-class``) labels from the top-level workload, so they go on the
RayCluster, or on the AppWrapper when wrapped (the AppWrapper controller admits what it
holds). They are never dropped.

GCS fault tolerance is rendered as ``spec.gcsFaultToleranceOptions``, which the KubeRay
v1.1 CRD does not know (its API server drops the field); v1.4 and later keep it.

:func:`to_dict` and :func:`to_yaml` give the Kubernetes JSON / block-style YAML with sorted
keys, the same text for the same configuration.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flarekit.cluster._config import (
    PRIORITY_LABEL,
    QUEUE_LABEL,
    ClusterConfiguration,
    WorkerGroup,
)

if TYPE_CHECKING:
    from flarekit_models._base import KubeModel
    from flarekit_models.appwrapper.v1beta2 import AppWrapper
    from flarekit_models.ray.v1 import RayCluster

__all__ = [
    "HEAD_CONTAINER",
    "WORKER_CONTAINER",
    "decode_ray_resources",
    "encode_ray_resources",
    "ray_start_params",
    "render",
    "render_appwrapper",
    "render_raycluster",
    "to_dict",
    "to_yaml",
]

#: Names of the Ray containers (KubeRay runs Ray in the first container of each pod).
HEAD_CONTAINER = "ray-head"
WORKER_CONTAINER = "ray-worker"


def encode_ray_resources(resources: Mapping[str, int]) -> str:
    """Custom Ray resources as KubeRay's ``rayStartParams["resources"]`` wants them.

    KubeRay pastes the value into a shell command line, so the JSON goes in double quotes
    with its own quotes escaped: ``{"TPU": 4}`` -> ``"{\\"TPU\\": 4}"``.
    """
    return '"' + json.dumps(dict(resources), sort_keys=True).replace('"', '\\"') + '"'


def decode_ray_resources(text: str) -> dict[str, Any]:
    """The inverse of :func:`encode_ray_resources`; also reads plain or single-quoted JSON.

    Returns ``{}`` for text that is not a JSON object.
    """
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].replace('\\"', '"')
    elif len(text) >= 2 and text[0] == text[-1] == "'":
        text = text[1:-1]
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def ray_start_params(
    devices: Mapping[str, int | str], mapping: Mapping[str, str]
) -> dict[str, str]:
    """``rayStartParams`` declaring ``devices`` (``{"nvidia.com/gpu": 2}``) to Ray.

    Devices mapped to ``GPU`` add up to ``num-gpus``; the others become custom resources
    (devices mapped to the same Ray resource add up too).
    """
    params: dict[str, str] = {}
    gpus = [int(count) for name, count in devices.items() if mapping[name] == "GPU"]
    if gpus:
        params["num-gpus"] = str(sum(gpus))
    custom: dict[str, int] = {}
    for name, count in devices.items():
        if mapping[name] != "GPU":
            custom[mapping[name]] = custom.get(mapping[name], 0) + int(count)
    if custom:
        params["resources"] = encode_ray_resources(custom)
    return params


def _resources(
    cpu_requests: Any, cpu_limits: Any, memory_requests: Any, memory_limits: Any, devices: Any
) -> dict[str, Any]:
    requests = {"cpu": cpu_requests, "memory": memory_requests}
    limits = {"cpu": cpu_limits, "memory": memory_limits}
    # Devices cannot be overcommitted: Kubernetes wants request == limit.
    requests.update(devices)
    limits.update(devices)
    out = {
        "requests": {k: v for k, v in requests.items() if v is not None},
        "limits": {k: v for k, v in limits.items() if v is not None},
    }
    return {k: v for k, v in out.items() if v}


def _dumped(items: list[Any]) -> list[dict[str, Any]]:
    return [item.to_dict() if hasattr(item, "to_dict") else dict(item) for item in items]


def _pod_template(
    config: ClusterConfiguration,
    container_name: str,
    image: str,
    resources: dict[str, Any],
    tolerations: list[Any],
    node_selector: dict[str, str],
    group: WorkerGroup | None = None,
) -> dict[str, Any]:
    """A Ray node's pod template; a worker `group`'s own envs win over the cluster's."""
    container: dict[str, Any] = {"name": container_name, "image": image}
    if resources:
        container["resources"] = resources
    envs = {**config.envs, **(group.envs if group is not None else {})}
    if envs:
        container["env"] = [{"name": k, "value": v} for k, v in envs.items()]
    if config.volume_mounts:
        container["volumeMounts"] = _dumped(config.volume_mounts)
    spec: dict[str, Any] = {"containers": [container]}
    if config.volumes:
        spec["volumes"] = _dumped(config.volumes)
    if tolerations:
        spec["tolerations"] = _dumped(tolerations)
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if config.image_pull_secrets:
        spec["imagePullSecrets"] = [{"name": s} for s in config.image_pull_secrets]
    if group is not None and group.labels:
        return {"metadata": {"labels": dict(group.labels)}, "spec": spec}
    return {"spec": spec}


def _worker_group(config: ClusterConfiguration, group: WorkerGroup) -> dict[str, Any]:
    resources = _resources(
        group.cpu_requests,
        group.cpu_limits,
        group.memory_requests,
        group.memory_limits,
        group.extended_resource_requests,
    )
    return {
        "groupName": group.name,
        "replicas": group.num_workers,
        "minReplicas": group.num_workers if group.min_workers is None else group.min_workers,
        "maxReplicas": group.num_workers if group.max_workers is None else group.max_workers,
        "rayStartParams": ray_start_params(
            group.extended_resource_requests, config.resource_mapping
        ),
        "template": _pod_template(
            config,
            WORKER_CONTAINER,
            group.image or config.effective_image,
            resources,
            group.tolerations,
            group.node_selector,
            group,
        ),
    }


def _kueue_labels(config: ClusterConfiguration) -> dict[str, str]:
    labels = {}
    if config.local_queue:
        labels[QUEUE_LABEL] = config.local_queue
    if config.priority_class:
        labels[PRIORITY_LABEL] = config.priority_class
    return labels


def _metadata(config: ClusterConfiguration, labels: dict[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": config.name}
    if config.namespace:
        metadata["namespace"] = config.namespace
    if labels:
        metadata["labels"] = labels
    return metadata


def raycluster_dict(config: ClusterConfiguration, *, wrapped: bool = False) -> dict[str, Any]:
    """The RayCluster as Kubernetes JSON; ``wrapped``: Kueue labels left to the AppWrapper."""
    labels = dict(config.labels)
    if not wrapped:
        labels.update(_kueue_labels(config))
    metadata = _metadata(config, labels)
    if config.annotations:
        metadata["annotations"] = dict(config.annotations)
    head_resources = _resources(
        config.head_cpu_requests,
        config.head_cpu_limits,
        config.head_memory_requests,
        config.head_memory_limits,
        config.head_extended_resource_requests,
    )
    spec: dict[str, Any] = {}
    if config.ray_version:
        spec["rayVersion"] = config.ray_version
    if config.enable_autoscaling:
        spec["enableInTreeAutoscaling"] = True
        if config.autoscaler_idle_timeout_seconds is not None:
            spec["autoscalerOptions"] = {
                "idleTimeoutSeconds": config.autoscaler_idle_timeout_seconds
            }
    if config.enable_gcs_ft:
        spec["gcsFaultToleranceOptions"] = _gcs_options(config)
    spec["headGroupSpec"] = {
        "rayStartParams": ray_start_params(
            config.head_extended_resource_requests, config.resource_mapping
        ),
        "template": _pod_template(
            config,
            HEAD_CONTAINER,
            config.effective_image,
            head_resources,
            config.head_tolerations,
            config.head_node_selector,
        ),
    }
    spec["workerGroupSpecs"] = [_worker_group(config, g) for g in config.all_worker_groups()]
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": metadata, "spec": spec}


def _gcs_options(config: ClusterConfiguration) -> dict[str, Any]:
    options: dict[str, Any] = {"redisAddress": config.redis_address}
    if config.redis_password_secret:
        secret = config.redis_password_secret
        options["redisPassword"] = {
            "valueFrom": {"secretKeyRef": {"name": secret["name"], "key": secret["key"]}}
        }
    if config.external_storage_namespace:
        options["externalStorageNamespace"] = config.external_storage_namespace
    return options


def render_raycluster(config: ClusterConfiguration, *, validated: bool = False) -> RayCluster:
    """The RayCluster of ``config`` as a typed model, standalone (never wrapped, so it
    carries the Kueue labels itself even if ``config.appwrapper`` is set).

    Raises :class:`~flarekit.cluster.ConfigError` if ``config`` was changed into an invalid
    one after construction (not checked again when the caller has just `validated` it).
    """
    from flarekit_models.ray.v1 import RayCluster

    if not validated:
        config.validate().raise_if_problems()
    return RayCluster.model_validate(raycluster_dict(config))


def render_appwrapper(config: ClusterConfiguration, *, validated: bool = False) -> AppWrapper:
    """``config``'s RayCluster inside an AppWrapper that carries the Kueue labels."""
    from flarekit_models.appwrapper.v1beta2 import AppWrapper

    if not validated:
        config.validate().raise_if_problems()
    wrapper = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": _metadata(config, _kueue_labels(config)),
        "spec": {"components": [{"template": raycluster_dict(config, wrapped=True)}]},
    }
    return AppWrapper.model_validate(wrapper)


def render(config: ClusterConfiguration, *, validated: bool = False) -> RayCluster | AppWrapper:
    """What to create for ``config``: an AppWrapper if ``config.appwrapper``, else a RayCluster."""
    if config.appwrapper:
        return render_appwrapper(config, validated=validated)
    return render_raycluster(config, validated=validated)


def to_dict(obj: ClusterConfiguration | KubeModel) -> dict[str, Any]:
    """Kubernetes JSON of a rendered object (a configuration is rendered first)."""
    model = render(obj) if isinstance(obj, ClusterConfiguration) else obj
    return model.to_dict()


def to_yaml(obj: ClusterConfiguration | KubeModel) -> str:
    """Block-style YAML with sorted keys: stable text for reviews, diffs and ``kubectl apply``
    (a configuration is rendered first)."""
    from flarekit._yaml import to_yaml as model_yaml

    return model_yaml(to_dict(obj))
