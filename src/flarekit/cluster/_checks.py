"""Every check of a :class:`~flarekit.cluster.ClusterConfiguration`, reported together.

Each problem names the parameter as the user wrote it (``worker_memory_requests``) or the
path inside it (``worker_groups[1].memory_requests``, ``volumes[0].configMap.name``,
``head_pod_template.spec.containers[0].image``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

from flarekit._core_checks import check_models
from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit._quantity import is_bare_number
from flarekit._sizes import check_annotations
from flarekit._validation import (
    DEFAULT_EXTENDED_RESOURCES,
    ValidationReport,
    check_count,
    check_dns1035_label,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_extended_resources,
    check_image,
    check_labels,
    check_limit_not_below_request,
    check_min_max,
    check_qualified_name,
    check_quantity,
    check_ray_image_version,
    ray_version_of_image,
)
from flarekit.cluster._defaults import DEFAULT_RAY_VERSION, MEMORY_UNIT
from flarekit.cluster._pod import PodSlot, check_pod_override, ray_pod_template
from flarekit.cluster._worker_group import WorkerGroup

if TYPE_CHECKING:

    from flarekit.cluster._parameters import ClusterParameters

__all__ = ["validate"]

#: Ray's own resources, which an extended resource may not be mapped onto.
_RAY_BUILTIN_RESOURCES = ("CPU", "memory", "object_store_memory")
#: A bare memory number this large was almost certainly meant as bytes, not gigabytes.
_IMPLAUSIBLE_GIGABYTES = Decimal(10) ** 6
_ENV_NAME = re.compile(r"[\x20-\x3c\x3e-\x7e]+")
_REDIS_ADDRESS = re.compile(r"(rediss?://)?[^\s:/]+(:[0-9]{1,5})?")


def validate(config: ClusterParameters) -> ValidationReport:
    """All problems of ``config``, in parameter order."""
    report = ValidationReport(f"ClusterConfiguration {config.name!r}")
    check_dns1035_label(report, "name", config.name)
    if config.namespace is not None:
        check_dns1123_label(report, "namespace", config.namespace)
    _check_image(report, "image", config.image, allow_none=True)
    check_ray_image_version(report, "image", config.image, "ray_version", config.ray_version)

    mapping = _check_mapping(report, config.extended_resource_mapping)
    _check_resources(report, config, "head_", "head_", mapping)
    _check_resources(report, config, "worker_", "worker_", mapping)
    _check_replicas(report, config, "")
    check_dns1123_label(report, "worker_group_name", config.worker_group_name)
    _check_worker_groups(report, config, mapping)

    _check_bool(report, "enable_autoscaling", config.enable_autoscaling)
    idle = config.autoscaler_idle_timeout_seconds
    check_count(report, "autoscaler_idle_timeout_seconds", idle, allow_none=True)
    if idle is not None and config.enable_autoscaling is False:
        report.add(
            "autoscaler_idle_timeout_seconds",
            idle,
            "only used with enable_autoscaling=True",
            "None, or enable_autoscaling=True",
        )
    _check_envs(report, config.envs)
    _check_operator_envs(report, config)
    _check_storage(report, config)
    _check_list_of_names(report, "image_pull_secrets", config.image_pull_secrets)
    check_labels(report, "labels", config.labels)
    check_annotations(report, "annotations", config.annotations)
    _check_kueue(report, config)
    _check_bool(report, "appwrapper", config.appwrapper)
    _check_gcs(report, config)
    _check_pod_overrides(report, config)
    return report


# --- helpers ------------------------------------------------------------------------------


def _check_bool(report: ValidationReport, field: str, value: object) -> None:
    if not isinstance(value, bool):
        report.add(field, value, f"expected True or False, got {type(value).__name__}", "a bool")


def _check_image(report: ValidationReport, field: str, value: object, *, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    check_image(report, field, value, example="rayproject/ray:2.47.1")


def _check_mapping(report: ValidationReport, mapping: object) -> dict[str, str]:
    field = "extended_resource_mapping"
    if not isinstance(mapping, Mapping):
        report.add(field, mapping, "expected a dict", "a dict such as {'example.com/fpga': 'FPGA'}")
        return dict(DEFAULT_EXTENDED_RESOURCES)
    for key, ray_name in mapping.items():
        where = f"{field}[{key!r}]"
        if not isinstance(key, str) or "/" not in key:
            report.add(
                where,
                key,
                "an extended resource name has a domain prefix",
                "a name such as 'example.com/fpga'",
            )
        else:
            check_qualified_name(report, where, key)
        if not isinstance(ray_name, str) or not ray_name or ray_name in _RAY_BUILTIN_RESOURCES:
            report.add(
                where,
                ray_name,
                "not a Ray custom resource name",
                "a non-empty name other than "
                + ", ".join(_RAY_BUILTIN_RESOURCES)
                + " (e.g. 'GPU', 'TPU', 'FPGA')",
            )
    return {**DEFAULT_EXTENDED_RESOURCES, **{str(k): str(v) for k, v in mapping.items()}}


def _check_memory(report: ValidationReport, field: str, value: object) -> Decimal | None:
    exact = check_quantity(report, field, value, allow_none=True)
    if exact is None or value is None or not is_bare_number(value):
        return exact
    if exact >= _IMPLAUSIBLE_GIGABYTES:
        report.add(
            field,
            value,
            f"a bare number is gigabytes, so this is {exact:f}G",
            "a quantity with a unit, e.g. '8Gi' or '8G' (bytes can be written as '8589934592e0')",
        )
        return None
    return exact * MEMORY_UNIT


def _check_resources(
    report: ValidationReport,
    group: ClusterParameters | WorkerGroup,
    attr: str,
    shown: str,
    mapping: Mapping[str, str],
) -> None:
    """CPU, memory, devices, tolerations and node selector of the head or one worker group.

    ``attr`` prefixes the attribute names (``head_``, ``worker_`` or ``""``), ``shown``
    prefixes the names in problems (``head_``, ``worker_``, ``worker_groups[2].``).
    """

    def get(name: str) -> object:  # checked here: a configuration may have been changed
        return getattr(group, attr + name)

    cpu_req = check_quantity(report, shown + "cpu_requests", get("cpu_requests"), allow_none=True)
    cpu_lim = check_quantity(report, shown + "cpu_limits", get("cpu_limits"), allow_none=True)
    check_limit_not_below_request(
        report,
        shown + "cpu_requests",
        cpu_req,
        shown + "cpu_limits",
        cpu_lim,
        get("cpu_limits"),
        get("cpu_requests"),
    )
    mem_req = _check_memory(report, shown + "memory_requests", get("memory_requests"))
    mem_lim = _check_memory(report, shown + "memory_limits", get("memory_limits"))
    check_limit_not_below_request(
        report,
        shown + "memory_requests",
        mem_req,
        shown + "memory_limits",
        mem_lim,
        get("memory_limits"),
        get("memory_requests"),
    )
    check_extended_resources(
        report, shown + "extended_resource_requests", get("extended_resource_requests"), mapping
    )
    check_models(report, shown + "tolerations", get("tolerations"), "Toleration")
    check_labels(report, shown + "node_selector", get("node_selector"))


def _check_replicas(
    report: ValidationReport, group: ClusterParameters | WorkerGroup, shown: str
) -> None:
    """``num_workers`` within ``min_workers`` .. ``max_workers``, all counts."""
    num = check_count(report, shown + "num_workers", group.num_workers)
    low = check_count(report, shown + "min_workers", group.min_workers, allow_none=True)
    high = check_count(report, shown + "max_workers", group.max_workers, allow_none=True)
    if not check_min_max(report, shown + "min_workers", low, shown + "max_workers", high):
        return
    if num is None:
        return
    if low is not None and num < low:
        report.add(
            shown + "num_workers",
            num,
            f"below {shown}min_workers ({low})",
            f"a number between {shown}min_workers and {shown}max_workers",
        )
    if high is not None and num > high:
        report.add(
            shown + "num_workers",
            num,
            f"above {shown}max_workers ({high})",
            f"a number between {shown}min_workers and {shown}max_workers",
        )


def _check_worker_groups(
    report: ValidationReport, config: ClusterParameters, mapping: Mapping[str, str]
) -> None:
    if not isinstance(config.worker_groups, list):
        report.add(
            "worker_groups", config.worker_groups, "expected a list", "a list of WorkerGroup"
        )
        return
    main = config.worker_group_name
    seen = {main: "worker_group_name"} if isinstance(main, str) else {}
    for i, group in enumerate(config.worker_groups):
        shown = f"worker_groups[{i}]."
        if not isinstance(group, WorkerGroup):
            report.add(f"worker_groups[{i}]", group, "not a WorkerGroup", "WorkerGroup(name, ...)")
            continue
        if check_dns1123_label(report, shown + "name", group.name):
            if group.name in seen:
                report.add(
                    shown + "name",
                    group.name,
                    f"the same name as {seen[group.name]}",
                    "a name no other worker group has",
                )
            seen[group.name] = shown + "name"
        _check_image(report, shown + "image", group.image, allow_none=True)
        _check_group_image_version(report, shown + "image", group.image, config)
        _check_resources(report, group, "", shown, mapping)
        _check_replicas(report, group, shown)
        _check_envs(report, group.envs, shown + "envs")
        check_labels(report, shown + "labels", group.labels)


def _check_group_image_version(
    report: ValidationReport, field: str, image: object, config: ClusterParameters
) -> None:
    """A worker group's own image must run the cluster's Ray version."""
    if config.ray_version is not None or config.image is None:
        version = config.ray_version or DEFAULT_RAY_VERSION
        found = ValidationReport()
        check_ray_image_version(found, field, image, "ray_version", version)
        # A bad ray_version itself is reported once, by the cluster-level check.
        report.problems.extend(p for p in found if p.field == field)
        return
    cluster = ray_version_of_image(config.image) if isinstance(config.image, str) else None
    if not isinstance(image, str) or cluster is None:
        return
    tagged = ray_version_of_image(image)
    if tagged is not None and tagged != cluster:
        report.add(
            field,
            image,
            f"the image runs Ray {tagged} but the cluster's image runs Ray {cluster}",
            f"an image of Ray {cluster}, or set ray_version and matching images",
        )


def _check_storage(report: ValidationReport, config: ClusterParameters) -> None:
    volumes = check_models(report, "volumes", config.volumes, "Volume")
    mounts = check_models(report, "volume_mounts", config.volume_mounts, "VolumeMount")
    seen: set[str] = set()
    for i, name in enumerate(volumes):
        if name in seen:
            report.add(f"volumes[{i}].name", name, "used by two volumes", "unique volume names")
        seen.add(name)
    for i, name in enumerate(mounts):
        if name and name not in seen:
            report.add(
                f"volume_mounts[{i}].name",
                name,
                "no volume of that name",
                "the name of one of volumes: " + (", ".join(sorted(seen)) or "(none given)"),
            )


def _check_envs(report: ValidationReport, envs: object, field: str = "envs") -> None:
    if not isinstance(envs, Mapping):
        report.add(field, envs, "expected a dict", "a dict of variable names to string values")
        return
    for key, value in envs.items():
        where = f"{field}[{key!r}]"
        if not isinstance(key, str) or not _ENV_NAME.fullmatch(key):
            report.add(where, key, "not an environment variable name", "printable ASCII, no '='")
        if not isinstance(value, str):
            report.add(
                where,
                value,
                f"expected a string, got {type(value).__name__}",
                f"a string, e.g. {str(value)!r}",
            )


def _check_operator_envs(report: ValidationReport, config: ClusterParameters) -> None:
    """Variables the KubeRay operator refuses in the head container, as it words it."""
    envs = config.envs if isinstance(config.envs, Mapping) else {}
    redis_vars = ("RAY_REDIS_ADDRESS", "REDIS_PASSWORD", "REDIS_USERNAME")
    for name in redis_vars:
        if name in envs and (config.enable_gcs_ft is True or name == "RAY_REDIS_ADDRESS"):
            report.add(
                f"envs[{name!r}]",
                envs[name],
                "KubeRay refuses Redis settings in environment variables",
                "enable_gcs_ft=True with redis_address / redis_password_secret instead",
            )
    autoscaler_v2 = envs.get("RAY_enable_autoscaler_v2")
    if autoscaler_v2 in ("1", "true") and config.enable_autoscaling is not True:
        report.add(
            "envs['RAY_enable_autoscaler_v2']",
            autoscaler_v2,
            "KubeRay refuses autoscaler v2 without autoscaling",
            "enable_autoscaling=True, or drop the variable",
        )


def _check_queue_name(report: ValidationReport, field: str, value: object) -> bool:
    """A LocalQueue / WorkloadPriorityClass name, which must also fit in a label value."""
    if not check_dns1123_subdomain(report, field, value) or not isinstance(value, str):
        return False
    if len(value) > 63:
        report.add(field, value, "too long for a label value", "a name of at most 63 characters")
        return False
    return True


def _check_list_of_names(report: ValidationReport, field: str, names: object) -> None:
    if not isinstance(names, list):
        report.add(field, names, "expected a list", "a list of secret names")
        return
    for i, name in enumerate(names):
        check_dns1123_subdomain(report, f"{field}[{i}]", name)


def _check_kueue(report: ValidationReport, config: ClusterParameters) -> None:
    labels = config.labels if isinstance(config.labels, Mapping) else {}
    for field, label in (("local_queue", QUEUE_LABEL), ("priority_class", PRIORITY_LABEL)):
        value = getattr(config, field)
        if value is not None and _check_queue_name(report, field, value):
            given = labels.get(label)
            if given is not None and given != value:
                report.add(
                    f"labels[{label!r}]",
                    given,
                    f"contradicts {field}={value!r}",
                    f"the same value as {field}, or only one of the two",
                )


def _check_gcs(report: ValidationReport, config: ClusterParameters) -> None:
    _check_bool(report, "enable_gcs_ft", config.enable_gcs_ft)
    if config.enable_gcs_ft is not True:
        for field in ("redis_address", "redis_password_secret", "external_storage_namespace"):
            value = getattr(config, field)
            if value is not None:
                report.add(field, value, "only used with enable_gcs_ft=True", "None")
        return
    address = config.redis_address
    if address is None:
        report.add(
            "redis_address",
            None,
            "required with enable_gcs_ft=True",
            "the external Redis as 'host:port' (e.g. 'redis:6379')",
        )
    elif not isinstance(address, str) or not _REDIS_ADDRESS.fullmatch(address):
        report.add(
            "redis_address", address, "not a Redis address", "'host:port' or 'redis://host:port'"
        )
    secret = config.redis_password_secret
    if secret is not None:
        if not isinstance(secret, Mapping) or set(secret) != {"name", "key"}:
            report.add(
                "redis_password_secret",
                secret,
                "expected exactly the keys 'name' and 'key'",
                "{'name': <secret name>, 'key': <key in the secret>}",
            )
        else:
            check_dns1123_subdomain(report, "redis_password_secret['name']", secret["name"])
            if not isinstance(secret["key"], str) or not secret["key"]:
                report.add(
                    "redis_password_secret['key']", secret["key"], "empty", "a key of the secret"
                )
    namespace = config.external_storage_namespace
    if namespace is not None and (not isinstance(namespace, str) or not namespace):
        report.add(
            "external_storage_namespace", namespace, "expected a non-empty string", "a string"
        )


def _check_pod_overrides(report: ValidationReport, config: ClusterParameters) -> None:
    """Each pod override as given; then, once every parameter is valid (the pods can be
    rendered), where an override meets what a parameter sets (see `flarekit.cluster._pod`)."""
    groups = config.worker_groups if isinstance(config.worker_groups, list) else []
    slots = [PodSlot(None), PodSlot(config.main_worker_group(), 0)]
    slots += [PodSlot(g, i + 1) for i, g in enumerate(groups) if isinstance(g, WorkerGroup)]
    valid: list[PodSlot] = []
    for slot in slots:
        value = config.head_pod_template if slot.group is None else slot.group.pod_template
        if value is not None and check_pod_override(report, slot, value):
            valid.append(slot)
    if not report:
        for slot in valid:
            ray_pod_template(config, slot, report)
