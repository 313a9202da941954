"""Read a :class:`ClusterConfiguration` back from an existing RayCluster (or its AppWrapper).

Why: to change a running cluster's configuration, to copy one someone else made, or to
check that a rendered object says what was meant. The object may come from anywhere (a
server, a YAML file, another tool), so missing fields are fine: an absent CPU limit reads
as ``None``, not as a default. What of a pod the parameters do not hold (affinity, a service
account, sidecars, probes, ...) becomes the pod override (``head_pod_template``,
``worker_pod_template``, ``WorkerGroup.pod_template``), so applying a configuration read from
a cluster keeps it; what a configuration cannot express at all (custom ``rayStartParams``,
...) is left out. For an object :func:`~flarekit.cluster.render` made, reading it back gives
an equal configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import flarekit.client
from flarekit._json import JsonValue
from flarekit._quantity import QuantityError, format_quantity, is_bare_number, parse_quantity
from flarekit._validation import ValidationReport
from flarekit.cluster._config import (
    PRIORITY_LABEL,
    QUEUE_LABEL,
    ClusterConfiguration,
    WorkerGroup,
)
from flarekit.cluster._pod import HEAD_CONTAINER, WORKER_CONTAINER, given
from flarekit.cluster._wrapper import is_mcad, wrapped_templates
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit_models import KubeModel
    from flarekit_models.core.v1 import (
        Container,
        EnvVar,
        PodSpec,
        PodTemplateSpec,
        Toleration,
        Volume,
        VolumeMount,
    )
    from flarekit_models.ray.v1 import RayClusterSpec, WorkerGroupSpec

__all__ = ["from_raycluster"]

#: Container resources that are not devices.
_NOT_DEVICES = ("cpu", "memory", "ephemeral-storage", "storage")


def _memory(value: int | str | None) -> int | str | None:
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


def _is_device(name: str) -> bool:
    return not (name in _NOT_DEVICES or name.startswith("hugepages-"))


_A = TypeVar("_A")


def _not_parameters(amounts: Mapping[str, _A] | None) -> dict[str, _A] | None:
    """The amounts no resource parameter holds (``ephemeral-storage``, ``hugepages-*``)."""
    kept = {k: v for k, v in (amounts or {}).items() if k not in ("cpu", "memory")}
    return {k: v for k, v in kept.items() if not _is_device(k)} or None


def _devices(amounts: Mapping[str, int | str]) -> dict[str, int | str]:
    devices: dict[str, int | str] = {}
    for name, amount in amounts.items():
        if not _is_device(name):
            continue
        try:
            exact = parse_quantity(amount)
            devices[name] = int(exact) if exact == exact.to_integral_value() else amount
        except QuantityError:
            devices[name] = amount
    return devices


class _Pod:
    """The parts of a group's pod template a configuration describes."""

    def __init__(self, template: PodTemplateSpec | None) -> None:
        self.template = template
        self.spec: PodSpec | None = template.spec if template is not None else None
        containers = self.spec.containers if self.spec is not None else []
        self.container: Container | None = containers[0] if containers else None
        resources = self.container.resources if self.container is not None else None
        self.requests = dict(resources.requests or {}) if resources is not None else {}
        self.limits = dict(resources.limits or {}) if resources is not None else {}

    @property
    def image(self) -> str | None:
        return self.container.image if self.container is not None else None

    @property
    def tolerations(self) -> list[Toleration]:
        return list(self.spec.tolerations or []) if self.spec is not None else []

    @property
    def node_selector(self) -> dict[str, str]:
        return dict(self.spec.node_selector or {}) if self.spec is not None else {}

    @property
    def volumes(self) -> list[Volume]:
        return list(self.spec.volumes or []) if self.spec is not None else []

    @property
    def volume_mounts(self) -> list[VolumeMount]:
        container = self.container
        return list(container.volume_mounts or []) if container is not None else []

    @property
    def image_pull_secrets(self) -> list[str]:
        refs = (self.spec.image_pull_secrets or []) if self.spec is not None else []
        return [ref.name for ref in refs if ref.name is not None]

    def labels(self) -> dict[str, str]:
        """The labels of the group's pods."""
        meta = self.template.metadata if self.template is not None else None
        return dict(meta.labels or {}) if meta is not None else {}

    def resource_kwargs(self, prefix: str) -> dict[str, object]:
        return {
            prefix + "cpu_requests": self.requests.get("cpu"),
            prefix + "cpu_limits": self.limits.get("cpu"),
            prefix + "memory_requests": _memory(self.requests.get("memory")),
            prefix + "memory_limits": _memory(self.limits.get("memory")),
            prefix + "extended_resource_requests": _devices({**self.requests, **self.limits}),
            prefix + "tolerations": self.tolerations,
            prefix + "node_selector": self.node_selector,
        }

    def envs(self, minus: Mapping[str, str] | None = None) -> dict[str, str]:
        """The Ray container's plain environment variables; `minus`: leave out those it
        shares, with the same value, with the cluster (a worker group's own ones remain)."""
        env = (self.container.env or []) if self.container is not None else []
        found = {e.name: e.value or "" for e in env if e.value_from is None}
        shared = minus or {}
        return {k: v for k, v in found.items() if shared.get(k) != v}

    def override(
        self,
        container: str,
        shared: _Shared,
        *,
        labels: bool = False,
        cluster_envs: Mapping[str, str] | None = None,
    ) -> PodTemplateSpec | None:
        """What of this pod the parameters do not hold, as a pod override (None: nothing).

        The Ray container (the first) is named `container`, flarekit's name for it. The
        `shared` volumes, mounts and pull secrets are parameters (rendered into every pod);
        `labels`: the pod labels are a parameter (extra worker groups); `cluster_envs`: only
        these variables are parameters (the main worker group, whose variables are the
        cluster's), else every plain variable is.
        """
        if self.template is None:
            return None
        rest = self.template.model_copy(deep=True)
        meta = rest.metadata
        if meta is not None and labels:
            meta.labels = None
            rest.metadata = given(meta) if given(meta).model_fields_set else None
        spec = rest.spec
        if spec is not None:
            volumes = {v.name for v in shared.volumes}
            mounts = {m.mount_path for m in shared.volume_mounts}
            spec.volumes = [v for v in spec.volumes or [] if v.name not in volumes] or None
            refs = spec.image_pull_secrets or []
            kept = [r for r in refs if r.name not in shared.image_pull_secrets]
            spec.image_pull_secrets = kept or None
            spec.tolerations = None
            spec.node_selector = None
            ray = [_ray_rest(c, container, mounts, cluster_envs) for c in spec.containers[:1]]
            spec.containers = [c for c in ray if c is not None] + spec.containers[1:]
            given(spec)
            if not spec.containers and spec.model_fields_set <= {"containers"}:
                rest.spec = None
        return given(rest) if given(rest).model_fields_set else None


@dataclass
class _Shared:
    """What the cluster-wide parameters ``volumes``, ``volume_mounts`` and
    ``image_pull_secrets`` hold: the volumes every pod has alike, the mounts of those every
    Ray container has alike, and the head's pull secrets (appended to every pod's)."""

    volumes: list[Volume]
    volume_mounts: list[VolumeMount]
    image_pull_secrets: list[str]

    @classmethod
    def of(cls, head: _Pod, workers: list[_Pod]) -> _Shared:
        def everywhere(
            item: KubeModel, lists: list[list[Volume]] | list[list[VolumeMount]]
        ) -> bool:
            return all(item.to_dict() in [i.to_dict() for i in items] for items in lists)

        volumes = [v for v in head.volumes if everywhere(v, [w.volumes for w in workers])]
        names = {v.name for v in volumes}
        mounts = [
            m
            for m in head.volume_mounts
            if m.name in names and everywhere(m, [w.volume_mounts for w in workers])
        ]
        return cls(volumes, mounts, head.image_pull_secrets)


def _ray_rest(
    ray: Container, name: str, mounts: set[str], cluster_envs: Mapping[str, str] | None
) -> Container | None:
    """What of the Ray container the parameters do not hold (None: nothing but its name)."""

    def is_parameter(env: EnvVar) -> bool:
        return env.value_from is None and (cluster_envs is None or env.name in cluster_envs)

    ray.name = name
    ray.image = None
    resources = ray.resources
    if resources is not None:
        resources.requests = _not_parameters(resources.requests)
        resources.limits = _not_parameters(resources.limits)
        ray.resources = given(resources) if given(resources).model_fields_set else None
    ray.env = [e for e in ray.env or [] if not is_parameter(e)] or None
    ray.volume_mounts = [m for m in ray.volume_mounts or [] if m.mount_path not in mounts] or None
    return ray if given(ray).model_fields_set - {"name"} else None


def _replicas(group: WorkerGroupSpec) -> dict[str, int | None]:
    low, high, num = group.min_replicas, group.max_replicas, group.replicas
    if num is None:
        num = low if low is not None else 0
    return {
        "num_workers": num,
        "min_workers": None if low == num else low,
        "max_workers": None if high == num else high,
    }


def _unwrap(data: Mapping[str, JsonValue]) -> tuple[Mapping[str, JsonValue], dict[str, str], bool]:
    """The RayCluster, the Kueue labels of the top-level object, and whether it was wrapped."""
    head = flarekit.client.head_of(data)
    labels = head.metadata.labels
    kueue = {k: v for k, v in labels.items() if k in (QUEUE_LABEL, PRIORITY_LABEL)}
    if head.kind == "AppWrapper":
        for template in wrapped_templates(data):
            if flarekit.client.head_of(template).kind == "RayCluster":
                return template, kueue, True
        where = (
            "spec.resources.GenericItems[].generictemplate"
            if is_mcad(data)
            else "spec.components[].template"
        )
        name = head.metadata.name or None
        raise ValueError(f"AppWrapper {name!r} holds no RayCluster in {where}")
    if head.kind not in ("", "RayCluster"):  # "": none, or not text (the model names it)
        raise ValueError(
            f"expected a RayCluster or an AppWrapper holding one, got kind {head.kind!r}"
        )
    return data, kueue, False


def _gcs(spec: RayClusterSpec) -> dict[str, object]:
    options = spec.gcs_fault_tolerance_options
    if options is None or not options.redis_address:
        return {}
    kwargs: dict[str, object] = {"enable_gcs_ft": True, "redis_address": options.redis_address}
    source = options.redis_password.value_from if options.redis_password is not None else None
    ref = source.secret_key_ref if source is not None else None
    if ref is not None and ref.name and ref.key:
        kwargs["redis_password_secret"] = {"name": ref.name, "key": ref.key}
    if options.external_storage_namespace:
        kwargs["external_storage_namespace"] = options.external_storage_namespace
    return kwargs


def _raycluster(
    obj: KubeModel | Mapping[str, JsonValue],
) -> tuple[ray_v1.RayCluster, dict[str, str], bool]:
    """`obj` as a RayCluster model, the Kueue labels of the top-level object, and whether
    it was wrapped in an AppWrapper."""
    from pydantic import ValidationError

    if isinstance(obj, ray_v1.RayCluster):
        meta = obj.metadata
        labels = dict(meta.labels or {}) if meta is not None else {}
        return obj, {k: v for k, v in labels.items() if k in (QUEUE_LABEL, PRIORITY_LABEL)}, False
    data = obj if isinstance(obj, Mapping) else obj.to_dict()
    cluster, kueue, wrapped = _unwrap(data)
    try:
        # Read as ray.io/v1 whichever version wrote it: the fields read here are the same.
        model = ray_v1.RayCluster.model_validate({**cluster, "apiVersion": "ray.io/v1"})
    except ValidationError as exc:
        # What the API server would refuse too (a duplicate list key, a wrong type): named
        # by its path in the RayCluster.
        report = ValidationReport("RayCluster")
        report.add_model_errors("", exc, "a valid RayCluster (Kubernetes JSON)")
        raise report.error() from None
    return model, kueue, wrapped


def from_raycluster(
    obj: KubeModel | Mapping[str, JsonValue],
    *,
    extended_resource_mapping: Mapping[str, str] | None = None,
) -> ClusterConfiguration:
    """The configuration of a RayCluster, or of an AppWrapper (v1beta2, or MCAD's v1beta1)
    holding one.

    ``obj`` is a ``flarekit_models`` model or its Kubernetes JSON as a dict. Devices other
    than the built-in ones need ``extended_resource_mapping`` (as for the configuration).
    Raises :class:`ValueError` for other kinds and
    :class:`~flarekit.cluster.ConfigError` if the object holds values a configuration
    refuses (a limit below its request, say).
    """
    cluster, kueue, wrapped = _raycluster(obj)
    metadata = cluster.metadata
    spec = cluster.spec
    head = _Pod(spec.head_group_spec.template if spec is not None else None)
    groups = list(spec.worker_group_specs or []) if spec is not None else []
    shared = _Shared.of(head, [_Pod(group.template) for group in groups])
    image = head.image
    cluster_envs = head.envs()
    autoscaling = spec is not None and spec.enable_in_tree_autoscaling is True
    kwargs: dict[str, object] = {
        "namespace": metadata.namespace if metadata is not None else None,
        "image": image,
        "ray_version": spec.ray_version if spec is not None else None,
        **head.resource_kwargs("head_"),
        "envs": cluster_envs,
        "head_pod_template": head.override(HEAD_CONTAINER, shared),
        "volumes": shared.volumes,
        "volume_mounts": shared.volume_mounts,
        "image_pull_secrets": head.image_pull_secrets,
        "labels": {**((metadata.labels or {}) if metadata is not None else {}), **kueue},
        "annotations": dict((metadata.annotations or {}) if metadata is not None else {}),
        "appwrapper": wrapped,
        "enable_autoscaling": autoscaling,
        "extended_resource_mapping": dict(extended_resource_mapping or {}),
        **(_gcs(spec) if spec is not None else {}),
    }
    options = spec.autoscaler_options if spec is not None else None
    if options is not None and options.idle_timeout_seconds is not None and autoscaling:
        kwargs["autoscaler_idle_timeout_seconds"] = options.idle_timeout_seconds
    if groups:
        main = _Pod(groups[0].template)
        kwargs.update(main.resource_kwargs("worker_"), **_replicas(groups[0]))
        kwargs["worker_group_name"] = groups[0].group_name
        kwargs.update(
            worker_pod_template=main.override(WORKER_CONTAINER, shared, cluster_envs=cluster_envs)
        )
    else:
        kwargs["num_workers"] = 0
    extra = []
    for group in groups[1:]:
        pod = _Pod(group.template)
        extra.append(
            WorkerGroup(
                group.group_name,
                image=None if pod.image == image else pod.image,
                **pod.resource_kwargs(""),  # type: ignore[arg-type]
                **_replicas(group),  # type: ignore[arg-type]
                envs=pod.envs(minus=cluster_envs),
                labels=pod.labels(),
                pod_template=pod.override(WORKER_CONTAINER, shared, labels=True),
            )
        )
    kwargs["worker_groups"] = extra
    name = metadata.name if metadata is not None else None
    return ClusterConfiguration(name or "", **kwargs)  # type: ignore[arg-type]
