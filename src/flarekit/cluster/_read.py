"""Read a :class:`ClusterConfiguration` back from an existing RayCluster (or its AppWrapper).

Why: to change a running cluster's configuration, to copy one someone else made, or to
check that a rendered object says what was meant. The object may come from anywhere (a
server, a YAML file, another tool), so missing fields are fine: an absent CPU limit reads
as ``None``, not as a default. What a configuration cannot express (sidecars, probes,
custom ``rayStartParams``, ...) is left out; for an object :func:`~flarekit.cluster.render`
made, reading it back gives an equal configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarekit._quantity import QuantityError, format_quantity, is_bare_number, parse_quantity
from flarekit.cluster._config import (
    PRIORITY_LABEL,
    QUEUE_LABEL,
    ClusterConfiguration,
    WorkerGroup,
)

__all__ = ["from_raycluster"]

#: Container resources that are not devices.
_NOT_DEVICES = ("cpu", "memory", "ephemeral-storage", "storage")


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _memory(value: Any) -> Any:
    """A memory amount in bytes, written so the configuration does not read it as gigabytes."""
    if value is None or not is_bare_number(value):
        return value
    try:
        exact = parse_quantity(value)
    except QuantityError:
        return value
    forms = [format_quantity(exact, binary=True), format_quantity(exact)]
    with_unit = [text for text in forms if not is_bare_number(text)]
    if with_unit:
        return min(with_unit, key=len)
    return f"{(exact / 1000).normalize():f}k"


def _devices(resources: Mapping[str, Any]) -> dict[str, int | str]:
    amounts = {**_map(resources.get("requests")), **_map(resources.get("limits"))}
    devices: dict[str, int | str] = {}
    for name, amount in amounts.items():
        if name in _NOT_DEVICES or name.startswith("hugepages-"):
            continue
        try:
            exact = parse_quantity(amount)
            devices[name] = int(exact) if exact == exact.to_integral_value() else amount
        except QuantityError:
            devices[name] = amount
    return devices


class _Pod:
    """The parts of a group's pod template a configuration describes."""

    def __init__(self, group: Mapping[str, Any]) -> None:
        self.template = _map(group.get("template"))
        self.spec = _map(self.template.get("spec"))
        containers = _list(self.spec.get("containers"))
        self.container = _map(containers[0]) if containers else {}
        self.resources = _map(self.container.get("resources"))
        self.requests = _map(self.resources.get("requests"))
        self.limits = _map(self.resources.get("limits"))

    def resource_kwargs(self, prefix: str) -> dict[str, Any]:
        return {
            prefix + "cpu_requests": self.requests.get("cpu"),
            prefix + "cpu_limits": self.limits.get("cpu"),
            prefix + "memory_requests": _memory(self.requests.get("memory")),
            prefix + "memory_limits": _memory(self.limits.get("memory")),
            prefix + "extended_resource_requests": _devices(self.resources),
            prefix + "tolerations": _list(self.spec.get("tolerations")),
            prefix + "node_selector": _map(self.spec.get("nodeSelector")),
        }

    def labels(self) -> dict[str, str]:
        """The labels of the group's pods (read through the generated model)."""
        from flarekit_models.core.v1 import PodTemplateSpec

        meta = PodTemplateSpec.model_validate(self.template).metadata
        return dict(meta.labels or {}) if meta is not None else {}


def _replicas(group: Mapping[str, Any]) -> dict[str, Any]:
    low, high = group.get("minReplicas"), group.get("maxReplicas")
    num = group.get("replicas")
    if num is None:
        num = low if low is not None else 0
    return {
        "num_workers": num,
        "min_workers": None if low == num else low,
        "max_workers": None if high == num else high,
    }


def _unwrap(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str], bool]:
    """The RayCluster, the Kueue labels of the top-level object, and whether it was wrapped."""
    kind = data.get("kind")
    labels = _map(_map(data.get("metadata")).get("labels"))
    kueue = {k: v for k, v in labels.items() if k in (QUEUE_LABEL, PRIORITY_LABEL)}
    if kind == "AppWrapper":
        from flarekit.cluster._wrapper import is_mcad, wrapped_templates

        for template in wrapped_templates(data):
            if template.get("kind") == "RayCluster":
                return dict(template), kueue, True
        name = _map(data.get("metadata")).get("name")
        where = (
            "spec.resources.GenericItems[].generictemplate"
            if is_mcad(data)
            else "spec.components[].template"
        )
        raise ValueError(f"AppWrapper {name!r} holds no RayCluster in {where}")
    if kind not in (None, "RayCluster"):
        raise ValueError(f"expected a RayCluster or an AppWrapper holding one, got kind {kind!r}")
    return dict(data), kueue, False


def _gcs(spec: Mapping[str, Any]) -> dict[str, Any]:
    options = _map(spec.get("gcsFaultToleranceOptions"))
    if not options.get("redisAddress"):
        return {}
    kwargs: dict[str, Any] = {"enable_gcs_ft": True, "redis_address": options["redisAddress"]}
    ref = _map(_map(_map(options.get("redisPassword")).get("valueFrom")).get("secretKeyRef"))
    if ref.get("name") and ref.get("key"):
        kwargs["redis_password_secret"] = {"name": ref["name"], "key": ref["key"]}
    if options.get("externalStorageNamespace"):
        kwargs["external_storage_namespace"] = options["externalStorageNamespace"]
    return kwargs


def _envs(pod: _Pod, minus: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Ray container's plain environment variables; `minus`: leave out those it shares,
    with the same value, with the cluster (a worker group's own ones are what remains)."""
    found = {
        e["name"]: e.get("value", "")
        for e in map(_map, _list(pod.container.get("env")))
        if "name" in e and "valueFrom" not in e
    }
    shared = minus or {}
    return {k: v for k, v in found.items() if shared.get(k) != v}


def from_raycluster(
    obj: Any, *, extended_resource_mapping: Mapping[str, str] | None = None
) -> ClusterConfiguration:
    """The configuration of a RayCluster, or of an AppWrapper (v1beta2, or MCAD's v1beta1)
    holding one.

    ``obj`` is a ``flarekit_models`` model or its Kubernetes JSON as a dict. Devices other
    than the built-in ones need ``extended_resource_mapping`` (as for the configuration).
    Raises :class:`ValueError` for other kinds and
    :class:`~flarekit.cluster.ConfigError` if the object holds values a configuration
    refuses (a limit below its request, say).
    """
    data = obj.to_dict() if hasattr(obj, "to_dict") else _map(obj)
    cluster, kueue, wrapped = _unwrap(data)
    metadata = _map(cluster.get("metadata"))
    spec = _map(cluster.get("spec"))
    head = _Pod(_map(spec.get("headGroupSpec")))
    groups = [_map(g) for g in _list(spec.get("workerGroupSpecs"))]

    image = head.container.get("image")
    ray_version = spec.get("rayVersion")
    cluster_envs = _envs(head)

    kwargs: dict[str, Any] = {
        "namespace": metadata.get("namespace"),
        "image": image,
        "ray_version": ray_version,
        **head.resource_kwargs("head_"),
        "envs": cluster_envs,
        "volumes": _list(head.spec.get("volumes")),
        "volume_mounts": _list(head.container.get("volumeMounts")),
        "image_pull_secrets": [
            s["name"] for s in map(_map, _list(head.spec.get("imagePullSecrets"))) if "name" in s
        ],
        "labels": {**_map(metadata.get("labels")), **kueue},
        "annotations": _map(metadata.get("annotations")),
        "appwrapper": wrapped,
        "enable_autoscaling": spec.get("enableInTreeAutoscaling") is True,
        "extended_resource_mapping": dict(extended_resource_mapping or {}),
        **_gcs(spec),
    }
    idle = _map(spec.get("autoscalerOptions")).get("idleTimeoutSeconds")
    if idle is not None and kwargs["enable_autoscaling"]:
        kwargs["autoscaler_idle_timeout_seconds"] = idle
    if groups:
        main = _Pod(groups[0])
        kwargs.update(main.resource_kwargs("worker_"), **_replicas(groups[0]))
        kwargs["worker_group_name"] = groups[0].get("groupName", "workers")
    else:
        kwargs["num_workers"] = 0
    extra = []
    for group in groups[1:]:
        pod = _Pod(group)
        group_image = pod.container.get("image")
        extra.append(
            WorkerGroup(
                group.get("groupName", ""),
                image=None if group_image == image else group_image,
                **pod.resource_kwargs(""),
                **_replicas(group),
                envs=_envs(pod, minus=cluster_envs),
                labels=pod.labels(),
            )
        )
    kwargs["worker_groups"] = extra
    return ClusterConfiguration(metadata.get("name", ""), **kwargs)
