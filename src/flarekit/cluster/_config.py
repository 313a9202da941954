"""What a Ray cluster should look like, in the parameter names CodeFlare SDK users know.

:class:`ClusterConfiguration` is a plain dataclass: cheap to import, easy to read in a
notebook, with the defaults documented below. Constructing one validates every parameter
at once and raises a single :class:`~flarekit._validation.ConfigError` listing all problems
before anything else happens; :meth:`ClusterConfiguration.validate` re-checks a
configuration that was changed after construction.

After validation, values are stored normalised, so a configuration compares equal to the
one read back from the RayCluster it renders:

* a bare number of memory (``8`` or ``"8"``) means gigabytes, as in CodeFlare SDK, and is
  stored as ``"8G"``; give a unit (``"8Gi"``, ``"512Mi"``) for anything else;
* a ``float`` quantity is stored as its canonical string (``0.5`` CPUs -> ``"500m"``);
* extended resource counts are stored as ``int``;
* volumes, volume mounts, tolerations and pod templates given as dicts become the typed
  models of ``flarekit_models.core.v1``;
* the Kueue labels ``kueue.x-k8s.io/queue-name`` and ``kueue.x-k8s.io/priority-class`` in
  ``labels`` become ``local_queue`` and ``priority_class``;
* a missing ``ray_version`` is read from the image tag (``rayproject/ray:2.9.0-py311`` ->
  ``"2.9.0"``), or is :data:`DEFAULT_RAY_VERSION` when no image is given; a missing
  ``image`` becomes ``rayproject/ray:<ray_version>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, TypeVar

from flarekit._json import JsonValue
from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit._quantity import format_quantity, is_bare_number, parse_quantity
from flarekit._validation import ValidationReport, ray_version_of_image
from flarekit.cluster._checks import validate
from flarekit.cluster._defaults import DEFAULT_IMAGE_REPOSITORY, DEFAULT_RAY_VERSION, MEMORY_UNIT
from flarekit.cluster._names import suggest_names
from flarekit.cluster._parameters import ClusterParameters
from flarekit.cluster._pod import pod_override
from flarekit.cluster._worker_group import QuantityValue, WorkerGroup
from flarekit_models.core import v1 as core_v1

if TYPE_CHECKING:
    from flarekit_models import KubeModel
    from flarekit_models.core.v1 import PodTemplateSpec

__all__ = [
    "DEFAULT_IMAGE_REPOSITORY",
    "DEFAULT_RAY_VERSION",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "ClusterConfiguration",
    "QuantityValue",
    "WorkerGroup",
]


@suggest_names
@dataclass
class ClusterConfiguration(ClusterParameters):
    """A Ray cluster: one head, a main worker group and optional extra worker groups.

    Only ``name`` is required. Defaults follow CodeFlare SDK: a head with 2 CPUs and 8G of
    memory, one worker with 1 CPU and 2G, no GPUs, no autoscaling, no AppWrapper.

    Parameters (all but ``name`` keyword-only):

    * ``name``: the RayCluster's name (a DNS-1035 label, it names Services too).
    * ``namespace``: where it goes; ``None`` leaves it to the client's default.
    * ``image``: container image of every Ray node; ``None`` means
      ``rayproject/ray:<ray_version>``. ``ray_version``: the Ray release in the image
      (KubeRay's ``rayVersion``); a Ray image tagged with another version is an error.
    * ``head_cpu_requests`` / ``_limits`` (2 / 2), ``head_memory_requests`` / ``_limits``
      (8 / 8, gigabytes when bare), ``head_extended_resource_requests`` (``{}``; e.g.
      ``{"nvidia.com/gpu": 1}``), ``head_tolerations``, ``head_node_selector``.
    * ``head_pod_template`` / ``worker_pod_template`` (``None``): the rest of the head's /
      main worker group's pods (affinity, ``serviceAccountName``, ``schedulerName``,
      ``securityContext``, sidecars, ...) as a ``flarekit_models.core.v1.PodTemplateSpec``
      or its Kubernetes JSON, merged into what the parameters render by the rules of
      `flarekit.cluster._pod` (maps by key, containers, env and volumes by name,
      tolerations appended; what a parameter sets is refused there, naming the parameter).
    * ``num_workers`` (1), ``min_workers`` / ``max_workers`` (``None``: ``num_workers``),
      ``worker_cpu_requests`` / ``_limits`` (1 / 1), ``worker_memory_requests`` / ``_limits``
      (2 / 2), ``worker_extended_resource_requests``, ``worker_tolerations``,
      ``worker_node_selector``, ``worker_group_name`` (``"workers"``).
    * ``worker_groups``: extra :class:`WorkerGroup` s, each with its own resources, image,
      tolerations, node selector, ``envs`` (over the cluster's), pod ``labels`` and
      ``pod_template``.
    * ``extended_resource_mapping``: more device resources and the Ray resource each one
      becomes (``{"example.com/fpga": "FPGA"}``); these win over the built-in ones
      (``nvidia.com/gpu``, ``amd.com/gpu``, ``intel.com/gpu`` -> ``GPU``, ``google.com/tpu``
      -> ``TPU``, ``habana.ai/gaudi`` -> ``HPU``, AWS Neuron -> ``neuron_cores``, ...).
    * ``enable_autoscaling`` (False) and ``autoscaler_idle_timeout_seconds`` (``None``:
      KubeRay's default, 60 seconds).
    * ``envs``: environment variables of every Ray container; ``volumes`` and
      ``volume_mounts`` (models of ``flarekit_models.core.v1`` or dicts in Kubernetes JSON
      form) for every Ray pod; ``image_pull_secrets``: secret names.
    * ``labels`` / ``annotations``: on the RayCluster.
    * ``local_queue``: Kueue LocalQueue (label ``kueue.x-k8s.io/queue-name`` on the
      top-level object); ``priority_class``: Kueue WorkloadPriorityClass (label
      ``kueue.x-k8s.io/priority-class``).
    * ``appwrapper``: wrap the RayCluster in an AppWrapper (``workload.codeflare.dev/v1beta2``).
    * ``enable_gcs_ft``, ``redis_address``, ``redis_password_secret`` (``{"name": ...,
      "key": ...}``), ``external_storage_namespace``: GCS fault tolerance with external Redis.

    CodeFlare SDK's deprecated names (``head_cpus``, ``min_cpus``, ``max_memory``,
    ``num_gpus``, ...) are not accepted: they, and any other unknown name, raise
    :class:`~flarekit.cluster._names.UnknownParameter` (a ``ConfigError`` and a ``TypeError``)
    naming the parameter to use instead (the ``*_requests`` / ``*_limits`` and
    ``*_extended_resource_requests`` parameters). There is no ``write_to_file``:
    ``to_yaml(config)`` gives the text to write.
    """

    def __post_init__(self) -> None:
        self.validate().raise_if_problems()
        _normalize(self)
        self._validated = repr(self)

    def validate(self) -> ValidationReport:
        """Every problem of this configuration (an empty report when it is valid)."""
        return validate(self)

    def validate_if_changed(self) -> ValidationReport:
        """`validate`, when the configuration changed since it was last validated (on
        construction, or by this call); an empty report otherwise: a configuration is
        checked once from construction to the write."""
        if getattr(self, "_validated", None) == repr(self):
            return ValidationReport()
        report = self.validate()
        if report.ok:
            self._validated = repr(self)
        return report


# --- normalisation (runs only on valid configurations) -------------------------------------


def memory_value(value: QuantityValue) -> Decimal:
    """The number of bytes a memory parameter means (bare numbers are gigabytes)."""
    exact = parse_quantity(value)
    return exact * MEMORY_UNIT if is_bare_number(value) else exact


def _cpu(value: QuantityValue | None) -> QuantityValue | None:
    if isinstance(value, float):
        return format_quantity(parse_quantity(value))
    return value


def _memory(value: QuantityValue | None) -> QuantityValue | None:
    if value is None or not is_bare_number(value):
        return value
    if isinstance(value, float):
        return format_quantity(memory_value(value))
    return f"{str(value).lstrip('+')}G"


_M = TypeVar("_M", bound="KubeModel")


def _models(
    kind: str, items: Sequence[_M | Mapping[str, JsonValue]]
) -> list[_M | Mapping[str, JsonValue]]:
    """`items` as models of `kind` (a `flarekit_models.core.v1` class name)."""
    if not items:
        return []  # without importing the models

    model: type[_M] = getattr(core_v1, kind)
    return [item if isinstance(item, model) else model.model_validate(item) for item in items]


def _pod_template(
    value: PodTemplateSpec | Mapping[str, JsonValue] | None,
) -> PodTemplateSpec | Mapping[str, JsonValue] | None:
    """A pod override as the model; one that sets nothing is no override (``None``)."""
    if value is None:
        return None

    template = pod_override(value)
    return template if template.model_fields_set else None


def _normalize_group(group: WorkerGroup | ClusterConfiguration, prefix: str) -> None:
    for kind in ("cpu_requests", "cpu_limits"):
        setattr(group, prefix + kind, _cpu(getattr(group, prefix + kind)))
    for kind in ("memory_requests", "memory_limits"):
        setattr(group, prefix + kind, _memory(getattr(group, prefix + kind)))
    extended = prefix + "extended_resource_requests"
    setattr(
        group, extended, {k: int(parse_quantity(v)) for k, v in getattr(group, extended).items()}
    )
    tolerations = prefix + "tolerations"
    setattr(group, tolerations, _models("Toleration", getattr(group, tolerations)))
    template = prefix + "pod_template"
    setattr(group, template, _pod_template(getattr(group, template)))


def _normalize(config: ClusterConfiguration) -> None:
    _normalize_group(config, "head_")
    _normalize_group(config, "worker_")
    for group in config.worker_groups:
        _normalize_group(group, "")
    config.volumes = _models("Volume", config.volumes)
    config.volume_mounts = _models("VolumeMount", config.volume_mounts)
    labels = dict(config.labels)
    config.local_queue = labels.pop(QUEUE_LABEL, None) or config.local_queue
    config.priority_class = labels.pop(PRIORITY_LABEL, None) or config.priority_class
    config.labels = labels
    if config.ray_version is None:
        config.ray_version = (
            DEFAULT_RAY_VERSION if config.image is None else ray_version_of_image(config.image)
        )
    if config.image is None:
        config.image = f"{DEFAULT_IMAGE_REPOSITORY}:{config.ray_version}"
