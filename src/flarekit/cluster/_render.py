"""Turn a :class:`ClusterConfiguration` into KubeRay objects, offline.

:func:`render_raycluster` builds a ``RayCluster`` (ray.io/v1): a head group and one worker
group per :class:`WorkerGroup`, container resources from the CPU / memory / device
parameters (with the pod overrides merged in by the rules of `flarekit.cluster._pod`),
and ``rayStartParams`` telling Ray about the devices (``num-gpus``, and
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
from typing import TYPE_CHECKING

from flarekit._json import JsonObject
from flarekit._sizes import check_object_size, check_parameter_size
from flarekit._validation import ValidationReport
from flarekit._yaml import to_yaml as model_yaml
from flarekit.cluster._config import PRIORITY_LABEL, QUEUE_LABEL, ClusterConfiguration
from flarekit.cluster._pod import (
    HEAD_CONTAINER,
    WORKER_CONTAINER,
    PodSlot,
    made,
    pod_slots,
    ray_pod_template,
)
from flarekit_models.appwrapper import v1beta2 as appwrapper_v1beta2
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit_models import KubeModel
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


def encode_ray_resources(resources: Mapping[str, int]) -> str:
    """Custom Ray resources as KubeRay's ``rayStartParams["resources"]`` wants them.

    KubeRay pastes the value into a shell command line, so the JSON goes in double quotes
    with its own quotes escaped: ``{"TPU": 4}`` -> ``"{\\"TPU\\": 4}"``.
    """
    return '"' + json.dumps(dict(resources), sort_keys=True).replace('"', '\\"') + '"'


def decode_ray_resources(text: str) -> JsonObject:
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


def _worker_group(
    config: ClusterConfiguration, slot: PodSlot, report: ValidationReport
) -> ray_v1.WorkerGroupSpec:
    group = slot.group
    assert group is not None  # a worker group's slot
    return made(
        ray_v1.WorkerGroupSpec,
        group_name=group.name,
        replicas=group.num_workers,
        min_replicas=group.num_workers if group.min_workers is None else group.min_workers,
        max_replicas=group.num_workers if group.max_workers is None else group.max_workers,
        ray_start_params=ray_start_params(
            group.extended_resource_requests, config.resource_mapping
        ),
        template=ray_pod_template(config, slot, report),
    )


def _kueue_labels(config: ClusterConfiguration) -> dict[str, str]:
    labels = {}
    if config.local_queue:
        labels[QUEUE_LABEL] = config.local_queue
    if config.priority_class:
        labels[PRIORITY_LABEL] = config.priority_class
    return labels


def _metadata(
    config: ClusterConfiguration, labels: dict[str, str], annotations: dict[str, str] | None = None
) -> meta_v1.ObjectMeta:
    return made(
        meta_v1.ObjectMeta,
        name=config.name,
        namespace=config.namespace or None,
        labels=labels or None,
        annotations=annotations or None,
    )


def _raycluster(config: ClusterConfiguration, *, wrapped: bool = False) -> ray_v1.RayCluster:
    """The RayCluster; ``wrapped``: Kueue labels left to the AppWrapper."""
    labels = dict(config.labels)
    if not wrapped:
        labels.update(_kueue_labels(config))
    # Conflicts between a pod override and the parameters are found by validation; a
    # configuration changed since is refused here rather than rendered half-merged.
    report = ValidationReport(f"ClusterConfiguration {config.name!r}")
    head_slot, *group_slots = pod_slots(config)
    head = made(
        ray_v1.HeadGroupSpec,
        ray_start_params=ray_start_params(
            config.head_extended_resource_requests, config.resource_mapping
        ),
        template=ray_pod_template(config, head_slot, report),
    )
    workers = [_worker_group(config, slot, report) for slot in group_slots]
    report.raise_if_problems()
    idle = config.autoscaler_idle_timeout_seconds if config.enable_autoscaling else None
    spec = made(
        ray_v1.RayClusterSpec,
        ray_version=config.ray_version or None,
        enable_in_tree_autoscaling=True if config.enable_autoscaling else None,
        autoscaler_options=(
            made(ray_v1.AutoscalerOptions, idle_timeout_seconds=idle) if idle is not None else None
        ),
        gcs_fault_tolerance_options=_gcs_options(config) if config.enable_gcs_ft else None,
        head_group_spec=head,
        worker_group_specs=workers,
    )
    return made(
        ray_v1.RayCluster, metadata=_metadata(config, labels, dict(config.annotations)), spec=spec
    )


def _gcs_options(config: ClusterConfiguration) -> ray_v1.GcsFaultToleranceOptions:
    password = None
    if config.redis_password_secret:
        secret = config.redis_password_secret
        ref = made(core_v1.SecretKeySelector, name=secret["name"], key=secret["key"])
        password = made(
            ray_v1.RedisPassword, value_from=made(core_v1.EnvVarSource, secret_key_ref=ref)
        )
    return made(
        ray_v1.GcsFaultToleranceOptions,
        redis_address=config.redis_address,
        redis_password=password,
        external_storage_namespace=config.external_storage_namespace or None,
    )


def render_raycluster(config: ClusterConfiguration, *, validated: bool = False) -> RayCluster:
    """The RayCluster of ``config`` as a typed model, standalone (never wrapped, so it
    carries the Kueue labels itself even if ``config.appwrapper`` is set).

    Raises :class:`~flarekit.cluster.ConfigError` if ``config`` was changed into an invalid
    one after construction (not checked again when the caller has just `validated` it).
    """
    if not validated:
        config.validate().raise_if_problems()
    return _raycluster(config)


def render_appwrapper(
    config: ClusterConfiguration, *, validated: bool = False
) -> appwrapper_v1beta2.AppWrapper:
    """``config``'s RayCluster inside an AppWrapper that carries the Kueue labels."""
    if not validated:
        config.validate().raise_if_problems()
    component = made(
        appwrapper_v1beta2.Component, template=_raycluster(config, wrapped=True).to_dict()
    )
    return made(
        appwrapper_v1beta2.AppWrapper,
        metadata=_metadata(config, _kueue_labels(config)),
        spec=made(appwrapper_v1beta2.AppWrapperSpec, components=[component]),
    )


#: Parameters every value of which is written into the rendered object (the environment once
#: per pod template), so that their size bounds its size from below.
_COPIED = (
    "envs",
    "labels",
    "annotations",
    "volumes",
    "volume_mounts",
    "image_pull_secrets",
    "head_pod_template",
    "worker_pod_template",
    "head_tolerations",
    "worker_tolerations",
    "head_node_selector",
    "worker_node_selector",
)


def render(config: ClusterConfiguration, *, validated: bool = False) -> RayCluster | AppWrapper:
    """What to create for ``config``: an AppWrapper if ``config.appwrapper``, else a RayCluster.
    One the API server could not store (`flarekit._sizes`) is a `ConfigError` naming the
    parameter that takes the most room, before any YAML is written or request sent."""
    import dataclasses

    subject = f"ClusterConfiguration {config.name!r}"
    kind = "AppWrapper" if config.appwrapper else "RayCluster"
    if not validated:
        config.validate().raise_if_problems()
    check_parameter_size(kind, subject, ((name, getattr(config, name)) for name in _COPIED))
    made = (render_appwrapper if config.appwrapper else render_raycluster)(config, validated=True)
    parameters = ((f.name, getattr(config, f.name)) for f in dataclasses.fields(config))
    check_object_size(made, subject, parameters)
    return made


def to_dict(obj: ClusterConfiguration | KubeModel) -> JsonObject:
    """Kubernetes JSON of a rendered object (a configuration is rendered first)."""
    model = render(obj) if isinstance(obj, ClusterConfiguration) else obj
    return model.to_dict()


def to_yaml(obj: ClusterConfiguration | KubeModel) -> str:
    """Block-style YAML with sorted keys: stable text for reviews, diffs and ``kubectl apply``
    (a configuration is rendered first)."""
    return model_yaml(to_dict(obj))
