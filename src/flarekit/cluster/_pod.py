"""A Ray node's pod template: what the parameters say, with the user's override merged in.

Why an override: the parameters of :class:`~flarekit.cluster.ClusterConfiguration` cover what
most clusters need, but not everything a pod can say (affinity, ``serviceAccountName``,
``schedulerName``, ``securityContext``, sidecars, probes, ...). ``head_pod_template``,
``worker_pod_template`` and ``WorkerGroup.pod_template`` take the rest as a pod template:
a ``flarekit_models.core.v1.PodTemplateSpec`` (``spec.containers`` may be ``[]``), or its
Kubernetes JSON as a dict (where ``spec.containers`` may be left out). It is merged into the
pod template flarekit renders from the parameters by these rules:

* a field flarekit does not render is taken from the override as it is, unknown fields
  included (``affinity``, ``serviceAccountName``, ``schedulerName``, ``securityContext``,
  ``priorityClassName``, ``initContainers``, a container's ``command``, ``ports``, probes...);
* objects merge field by field (``metadata``, ``spec``, a container's ``resources``) and maps
  key by key (``metadata.labels`` / ``annotations``, ``spec.nodeSelector``,
  ``resources.requests`` / ``limits``);
* ``spec.containers``, ``spec.volumes``, ``spec.initContainers`` and a container's ``env``
  merge by ``name``, a container's ``volumeMounts`` by ``mountPath``. A container named like
  the Ray container (``ray-head`` in the head, ``ray-worker`` in worker groups) merges into it
  field by field; other containers are added after it (KubeRay runs Ray in the first
  container) and need their own ``image``;
* ``spec.tolerations`` and ``spec.imagePullSecrets`` are appended (an item equal to a
  rendered one is not repeated);
* what flarekit renders from a parameter is never replaced: an override that sets it too
  (the Ray container's ``image``, its ``cpu``, ``memory`` and device amounts, a variable of
  ``envs``, a volume of ``volumes``, a mount path of ``volume_mounts``, a key of
  ``*_node_selector``, a pod label of ``WorkerGroup.labels``) is refused with a
  :class:`~flarekit.cluster.ConfigError` naming the override's field path and the parameter
  to use, even when the two values agree: each setting has one place.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import flarekit_models
from flarekit._json import JsonValue
from flarekit._validation import ValidationReport
from flarekit.cluster._worker_group import QuantityValue
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1

if TYPE_CHECKING:
    from pydantic import BaseModel

    from flarekit.cluster._parameters import ClusterParameters
    from flarekit.cluster._worker_group import WorkerGroup
    from flarekit_models import KubeModel
    from flarekit_models.core.v1 import PodTemplateSpec, ResourceRequirements

__all__ = [
    "HEAD_CONTAINER",
    "WORKER_CONTAINER",
    "PodSlot",
    "check_pod_override",
    "copies",
    "given",
    "made",
    "pod_override",
    "pod_slots",
    "ray_pod_template",
    "resources",
]

#: Names of the Ray containers (KubeRay runs Ray in the first container of each pod).
HEAD_CONTAINER = "ray-head"
WORKER_CONTAINER = "ray-worker"

_M = TypeVar("_M", bound="KubeModel")

#: Lists merged by a key (JSON field name of the list -> JSON field name of the key).
_KEYED = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
}
#: Keyed lists whose items with the same key merge field by field (others conflict).
_MERGED_ITEMS = ("containers", "initContainers")
#: Lists the override's items are appended to.
_APPENDED = ("tolerations", "imagePullSecrets")


def given(model: _M) -> _M:
    """`model` with the fields passed as None marked unset: a rendered object holds only
    what the configuration says (its JSON has no nulls)."""
    fields = model.model_fields_set
    for name in [name for name in fields if getattr(model, name) is None]:
        fields.discard(name)
    return model


def made(kind: type[_M], **values: object) -> _M:
    """A model of `kind` holding `values` (None: not set, so its JSON has no nulls), built
    without running the model's validator.

    Why: every value comes from a configuration that was checked when it was made
    (`ClusterConfiguration.validate` holds the parameters to the rules the models hold, and
    the tests render every kind of configuration and validate the result with the models),
    and validating a pod template first generates the validator of the whole pod schema:
    most of what `flarekit cluster render` cost. Validators are built when something is
    validated or sent (a client's dump), not to render.
    """
    given_values: dict[str, Any] = {name: v for name, v in values.items() if v is not None}
    model = kind.model_construct(None, **given_values)
    if isinstance(
        model, flarekit_models.KubeResource
    ):  # written with its apiVersion and kind, as validated
        model.model_fields_set.update(("api_version", "kind"))
    return cast(_M, model)


def copies(kind: type[_M], items: Sequence[_M | Mapping[str, object]]) -> list[_M] | None:
    """Fresh models of `items` (a rendered object shares nothing with its configuration);
    None for none."""
    return [
        item.model_copy(deep=True) if isinstance(item, kind) else kind.model_validate(item)
        for item in items
    ] or None


def resources(
    cpu_requests: QuantityValue | None,
    cpu_limits: QuantityValue | None,
    memory_requests: QuantityValue | None,
    memory_limits: QuantityValue | None,
    devices: Mapping[str, int | str],
) -> core_v1.ResourceRequirements | None:
    """A Ray container's resources; None when no amount is given."""
    # Devices cannot be overcommitted: Kubernetes wants request == limit.
    requests = {"cpu": cpu_requests, "memory": memory_requests, **devices}
    limits = {"cpu": cpu_limits, "memory": memory_limits, **devices}
    given_requests = {k: v for k, v in requests.items() if v is not None}
    given_limits = {k: v for k, v in limits.items() if v is not None}
    if not given_requests and not given_limits:
        return None
    return made(
        core_v1.ResourceRequirements, requests=given_requests or None, limits=given_limits or None
    )


def _rendered(
    config: ClusterParameters,
    container_name: str,
    image: str,
    requirements: ResourceRequirements | None,
    tolerations: list[core_v1.Toleration | Mapping[str, JsonValue]],
    node_selector: dict[str, str],
    group: WorkerGroup | None = None,
) -> core_v1.PodTemplateSpec:
    """A Ray node's pod template from the parameters alone; a worker `group`'s own envs
    win over the cluster's."""
    envs = {**config.envs, **(group.envs if group is not None else {})}
    container = made(
        core_v1.Container,
        name=container_name,
        image=image,
        resources=requirements,
        env=[made(core_v1.EnvVar, name=k, value=v) for k, v in envs.items()] or None,
        volume_mounts=copies(core_v1.VolumeMount, config.volume_mounts),
    )
    spec = made(
        core_v1.PodSpec,
        containers=[container],
        volumes=copies(core_v1.Volume, config.volumes),
        tolerations=copies(core_v1.Toleration, tolerations),
        node_selector=dict(node_selector) or None,
        image_pull_secrets=[
            made(core_v1.LocalObjectReference, name=s) for s in config.image_pull_secrets
        ]
        or None,
    )
    labels = dict(group.labels) if group is not None and group.labels else None
    metadata = made(meta_v1.ObjectMeta, labels=labels) if labels else None
    return made(core_v1.PodTemplateSpec, metadata=metadata, spec=spec)


# --- which pods, and where their overrides are ---------------------------------------------


@dataclass(frozen=True)
class PodSlot:
    """One kind of Ray pod of a configuration: the head, or one worker group (`index` in
    ``all_worker_groups()``), with the names its parameters have in error messages."""

    group: WorkerGroup | None
    index: int = -1

    @property
    def field(self) -> str:
        """The override's parameter."""
        if self.group is None:
            return "head_pod_template"
        return "worker_pod_template" if self.index == 0 else f"{self.extra}pod_template"

    @property
    def extra(self) -> str:
        """``worker_groups[i].`` for an extra worker group, else ``""``."""
        return f"worker_groups[{self.index - 1}]." if self.index > 0 else ""

    @property
    def prefix(self) -> str:
        """What the resource parameters of this pod start with."""
        if self.group is None:
            return "head_"
        return self.extra or "worker_"

    @property
    def container(self) -> str:
        return HEAD_CONTAINER if self.group is None else WORKER_CONTAINER

    def owner(self, field: str, key: str | None) -> str:
        """The parameter that renders JSON field `field` (map key `key`) of this pod."""
        if field in ("requests", "limits"):
            kind = key if key in ("cpu", "memory") else None
            return self.prefix + (f"{kind}_{field}" if kind else "extended_resource_requests")
        return {
            "image": self.extra + "image",
            "env": "envs" + (f" or {self.extra}envs" if self.extra else ""),
            "volumes": "volumes",
            "volumeMounts": "volume_mounts",
            "nodeSelector": self.prefix + "node_selector",
            "labels": self.extra + "labels",
        }.get(field, "the configuration's parameters")


def pod_slots(config: ClusterParameters) -> list[PodSlot]:
    """The head, then every worker group (the main one first)."""
    groups = config.all_worker_groups()
    return [PodSlot(None), *(PodSlot(group, i) for i, group in enumerate(groups))]


def ray_pod_template(
    config: ClusterParameters, slot: PodSlot, report: ValidationReport
) -> PodTemplateSpec:
    """The pod template of `slot`: rendered from the parameters, the override merged in.
    Conflicts between the two are added to `report` (the result then holds the rendered
    values)."""
    group = slot.group
    if group is None:
        template = _rendered(
            config,
            HEAD_CONTAINER,
            config.effective_image,
            resources(
                config.head_cpu_requests,
                config.head_cpu_limits,
                config.head_memory_requests,
                config.head_memory_limits,
                config.head_extended_resource_requests,
            ),
            config.head_tolerations,
            config.head_node_selector,
        )
        override = config.head_pod_template
    else:
        template = _rendered(
            config,
            WORKER_CONTAINER,
            group.image or config.effective_image,
            resources(
                group.cpu_requests,
                group.cpu_limits,
                group.memory_requests,
                group.memory_limits,
                group.extended_resource_requests,
            ),
            group.tolerations,
            group.node_selector,
            group,
        )
        override = group.pod_template
    if override is not None:
        _Merge(report, slot).model(template, pod_override(override), slot.field)
    return template


# --- the override as given ----------------------------------------------------------------


def pod_override(
    value: core_v1.PodTemplateSpec | Mapping[str, JsonValue],
) -> core_v1.PodTemplateSpec:
    """`value` as a ``PodTemplateSpec`` (a model is returned as it is); raises pydantic's
    ``ValidationError`` for a dict that is not one."""
    if isinstance(value, core_v1.PodTemplateSpec):
        return value
    data: Mapping[str, object] = value
    match value:
        case {"spec": Mapping() as spec} if "containers" not in spec:
            # Containers are optional in an override: only the ones to change are given.
            data = {**value, "spec": {**spec, "containers": []}}
    return core_v1.PodTemplateSpec.model_validate(data)


def check_pod_override(report: ValidationReport, slot: PodSlot, value: object) -> bool:
    """Problems of an override as given (not yet of how it meets the parameters); True if
    it has none."""
    from pydantic import ValidationError

    field = slot.field
    if not isinstance(value, core_v1.PodTemplateSpec | Mapping):
        report.add(
            field,
            value,
            f"expected a PodTemplateSpec or a dict, got {type(value).__name__}",
            "a flarekit_models.core.v1.PodTemplateSpec, or its Kubernetes JSON "
            "(e.g. {'spec': {'serviceAccountName': 'ray'}})",
        )
        return False
    try:
        template = pod_override(value)
    except ValidationError as exc:
        report.add_model_errors(field, exc, "a valid pod template (Kubernetes JSON field names)")
        return False
    before = len(report)
    containers = template.spec.containers if template.spec is not None else []
    for i, container in enumerate(containers):
        if container.name != slot.container and not container.image:
            report.add(
                f"{field}.spec.containers[{i}].image",
                container.image,
                f"container {container.name!r} is not the Ray container, so it is added "
                "and needs an image",
                f"an image, or the name {slot.container!r} to change the Ray container",
            )
    _check_json_names(report, template, field)
    return len(report) == before


def _check_json_names(report: ValidationReport, value: object, path: str) -> None:
    """Keys spelt as the models' Python attribute (``service_account_name``) instead of the
    Kubernetes JSON name: kept as unknown fields, the API server would drop them silently.
    Any other unknown key is kept (a newer Kubernetes may know it)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        for key, given_value in (value.__pydantic_extra__ or {}).items():
            info = fields.get(key)
            if info is not None and info.alias not in (None, key):
                report.add(
                    f"{path}.{key}",
                    given_value,
                    "a Python attribute name, not a Kubernetes JSON field name",
                    f"{info.alias!r}",
                )
        for name in value.model_fields_set & set(fields):
            _check_json_names(report, getattr(value, name), f"{path}.{_json_name(value, name)}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_json_names(report, item, f"{path}[{i}]")


# --- merging ------------------------------------------------------------------------------


def _json_name(model: BaseModel, name: str) -> str:
    info = type(model).model_fields.get(name)
    return (info.alias or name) if info is not None else name


def _key_of(item: object, key: str) -> object:
    """The value of JSON field `key` of a list item (a model)."""
    from pydantic import BaseModel

    if isinstance(item, BaseModel):
        for name, info in type(item).model_fields.items():
            if (info.alias or name) == key:
                return getattr(item, name)
    return None


def _plain(value: object) -> object:
    """`value` as JSON, for comparing list items and for messages."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return value


@dataclass
class _Merge:
    """One override merged into one rendered pod template, conflicts noted in `report`."""

    report: ValidationReport
    slot: PodSlot

    def conflict(self, path: str, field: str, key: str | None, value: object) -> None:
        owner = self.slot.owner(field, key)
        self.report.add(
            path,
            _plain(value),
            f"flarekit sets this from {owner}",
            f"nothing here: set it with {owner} (each setting has one place)",
        )

    def model(
        self, base: BaseModel, override: BaseModel, path: str, skip: str | None = None
    ) -> None:
        """Merge `override` into `base` (the rendered one, changed in place)."""
        from pydantic import BaseModel

        set_fields = override.model_fields_set
        declared = [name for name in type(override).model_fields if name in set_fields]
        unknown = [name for name in override.__pydantic_extra__ or {} if name in set_fields]
        for name in declared + unknown:
            value = getattr(override, name)
            field = _json_name(override, name)
            if value is None or field == skip:
                continue
            here = f"{path}.{field}"
            current = getattr(base, name) if name in base.model_fields_set else None
            if current is None:
                setattr(base, name, copy.deepcopy(value))
            elif isinstance(current, BaseModel) and isinstance(value, BaseModel):
                self.model(current, value, here)
            elif isinstance(current, dict) and isinstance(value, dict):
                setattr(base, name, self.mapping(current, value, field, here))
            elif isinstance(current, list) and isinstance(value, list):
                setattr(base, name, self.items(current, value, field, here))
            else:
                self.conflict(here, field, None, value)

    def mapping(
        self, current: dict[str, object], value: dict[str, object], field: str, path: str
    ) -> dict[str, object]:
        merged = dict(current)
        for key, item in value.items():
            if key in merged:
                self.conflict(f"{path}[{key!r}]", field, key, item)
            else:
                merged[key] = copy.deepcopy(item)
        return merged

    def items(
        self, current: list[object], value: list[object], field: str, path: str
    ) -> list[object]:
        from pydantic import BaseModel

        merged = list(current)
        if field in _APPENDED:
            seen = [_plain(item) for item in merged]
            merged.extend(copy.deepcopy(item) for item in value if _plain(item) not in seen)
            return merged
        key = _KEYED.get(field)
        if key is None:
            self.conflict(path, field, None, value)
            return merged
        where = {_key_of(item, key): item for item in merged}
        for i, item in enumerate(value):
            name = _key_of(item, key)
            target = where.get(name)
            if target is None:
                merged.append(copy.deepcopy(item))
            elif (
                field in _MERGED_ITEMS
                and isinstance(target, BaseModel)
                and isinstance(item, BaseModel)
            ):
                self.model(target, item, f"{path}[{i}]", skip=key)
            else:
                self.conflict(f"{path}[{i}].{key}", field, None, name)
        return merged
