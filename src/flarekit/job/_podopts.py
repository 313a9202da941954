"""Pod customisation of a TrainJob, written in whichever field the server's Trainer has.

Users want volumes, mounts, a node selector, tolerations, affinity, a service account and
image pull secrets on the training pods. Trainer has changed where a TrainJob says so three
times: ``podSpecOverrides`` (v2.0, without affinity or image pull secrets),
``podTemplateOverrides`` (v2.1, a pod template per list of target jobs) and
``runtimePatches`` (v2.2 on, a patch of the runtime's JobSet owned by a named manager).
`PodOptions` holds what the user asked once; `render` writes it for one of the three fields,
and `unsupported` names the options a field cannot express, so they are refused instead of
being dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from flarekit._core_checks import check_models
from flarekit._validation import ValidationReport, check_dns1123_subdomain, check_labels
from flarekit_models.core import v1 as core_v1

if TYPE_CHECKING:
    from flarekit._json import JsonObject, JsonValue
    from flarekit_models import KubeModel
    from flarekit_models.core.v1 import Affinity, Toleration, Volume, VolumeMount

M = TypeVar("M", bound="KubeModel")

__all__ = [
    "MANAGER",
    "POD_FIELDS",
    "PodField",
    "PodOptions",
    "check_pod_options",
    "render",
    "unsupported",
]

PodField = Literal["runtimePatches", "podTemplateOverrides", "podSpecOverrides"]
#: Newest first: the order in which a server is asked which one it has.
POD_FIELDS: tuple[PodField, ...] = ("runtimePatches", "podTemplateOverrides", "podSpecOverrides")
#: Which Trainer releases have each field, for error messages.
RELEASES: dict[PodField, str] = {
    "runtimePatches": "Trainer v2.2 and later",
    "podTemplateOverrides": "Trainer v2.1",
    "podSpecOverrides": "Trainer v2.0",
}
#: The `manager` of flarekit's entry in `runtimePatches`.
MANAGER = "flarekit.dev/sdk"

_OPTIONS = (
    "volumes",
    "volume_mounts",
    "node_selector",
    "tolerations",
    "affinity",
    "service_account",
    "image_pull_secrets",
)
_NOT_IN_POD_SPEC_OVERRIDES = ("affinity", "image_pull_secrets")


@dataclass(frozen=True)
class PodOptions:
    """What the training pods should get on top of the runtime's pod template (models)."""

    volumes: Sequence[Volume] = ()
    volume_mounts: Sequence[VolumeMount] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: Sequence[Toleration] = ()
    affinity: Affinity | None = None
    service_account: str | None = None
    image_pull_secrets: Sequence[str] = ()

    def used(self) -> list[str]:
        """The options that are set, by parameter name."""
        return [name for name in _OPTIONS if getattr(self, name)]

    def __bool__(self) -> bool:
        return bool(self.used())


def _as_models(items: Sequence[M | Mapping[str, JsonValue]], model: type[M]) -> list[M]:
    """Checked items as models (a model given is copied, so later changes to it do not leak
    into the job)."""
    return [model.model_validate(i.to_dict() if isinstance(i, model) else i) for i in items]


def _listed(
    report: ValidationReport,
    name: str,
    value: Sequence[M | Mapping[str, JsonValue]] | None,
    model: type[M],
) -> list[M]:
    """`value` (a list of models or their JSON) checked and read as models ([] if it has
    problems)."""
    if value is None:
        return []
    items = list(value) if isinstance(value, tuple) else value
    before = len(report)
    check_models(report, name, items, model.__name__)
    return _as_models(items, model) if len(report) == before else []


def check_pod_options(
    report: ValidationReport,
    *,
    volumes: Sequence[core_v1.Volume | Mapping[str, JsonValue]] | None = None,
    volume_mounts: Sequence[core_v1.VolumeMount | Mapping[str, JsonValue]] | None = None,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[core_v1.Toleration | Mapping[str, JsonValue]] | None = None,
    affinity: core_v1.Affinity | Mapping[str, JsonValue] | None = None,
    service_account: str | None = None,
    image_pull_secrets: Sequence[str] | None = None,
) -> PodOptions:
    """Validate the pod options (None means not set)."""
    checked_volumes = _listed(report, "volumes", volumes, core_v1.Volume)
    mounts = _listed(report, "volume_mounts", volume_mounts, core_v1.VolumeMount)
    names = {v.name for v in checked_volumes}
    for i, mount in enumerate(mounts):
        if checked_volumes and mount.name not in names:
            report.add(
                f"volume_mounts[{i}].name",
                mount.name,
                "no volume of that name",
                "the name of one of volumes: " + ", ".join(sorted(names)),
            )
    checked_tolerations = _listed(report, "tolerations", tolerations, core_v1.Toleration)
    node_selector = node_selector or {}
    if node_selector:
        check_labels(report, "node_selector", node_selector)
    checked_affinity = (
        _check_one(report, "affinity", affinity, core_v1.Affinity) if affinity is not None else None
    )
    if service_account is not None:
        check_dns1123_subdomain(report, "service_account", service_account)
    secrets = image_pull_secrets or []
    if not isinstance(secrets, list | tuple):
        report.add("image_pull_secrets", secrets, "expected a list", "a list of Secret names")
        secrets = []
    for i, secret in enumerate(secrets):
        check_dns1123_subdomain(report, f"image_pull_secrets[{i}]", secret)
    return PodOptions(
        volumes=checked_volumes,
        volume_mounts=mounts,
        node_selector=dict(node_selector) if isinstance(node_selector, Mapping) else {},
        tolerations=checked_tolerations,
        affinity=checked_affinity,
        service_account=service_account,
        image_pull_secrets=tuple(str(s) for s in secrets),
    )


def _check_one(
    report: ValidationReport, name: str, value: M | Mapping[str, JsonValue], model: type[M]
) -> M | None:
    before = len(report)
    check_models(report, name, [value], model.__name__)
    for i in range(before, len(report)):  # "affinity[0].x" -> "affinity.x"
        problem = report.problems[i]
        report.problems[i] = type(problem)(
            problem.field.replace(f"{name}[0]", name, 1),
            problem.value,
            problem.message,
            problem.expected,
        )
    return _as_models([value], model)[0] if len(report) == before else None


def unsupported(options: PodOptions, pod_field: PodField) -> list[str]:
    """The options set in `options` that `pod_field` cannot express."""
    if pod_field != "podSpecOverrides":
        return []
    return [name for name in _NOT_IN_POD_SPEC_OVERRIDES if getattr(options, name)]


def _pod_spec(options: PodOptions, containers: Sequence[str], pod_field: PodField) -> JsonObject:
    """The pod part of one entry: a pod spec fragment, whose field each Trainer release
    types differently (so it is written as the JSON every release reads), from the models."""
    mounts = [m.to_dict() for m in options.volume_mounts]
    full = pod_field != "podSpecOverrides"  # podSpecOverrides has no affinity or secrets
    affinity = options.affinity.to_dict() if options.affinity is not None and full else None
    secrets = [{"name": s} for s in options.image_pull_secrets] if full else []
    spec: JsonObject = {
        "serviceAccountName": options.service_account or None,
        "nodeSelector": dict(options.node_selector) or None,
        "affinity": affinity or None,
        "tolerations": [t.to_dict() for t in options.tolerations] or None,
        "volumes": [v.to_dict() for v in options.volumes] or None,
        "containers": [{"name": c, "volumeMounts": mounts} for c in containers] if mounts else None,
        "imagePullSecrets": secrets or None,
    }
    return {key: value for key, value in spec.items() if value is not None}


def render(
    options: PodOptions,
    pod_field: PodField,
    targets: Mapping[str, Sequence[str]],
) -> list[JsonObject]:
    """The value of `spec.<pod_field>` applying `options` to the replicated jobs in `targets`
    (job name -> the containers that get the volume mounts)."""
    if not options:
        return []
    if pod_field == "runtimePatches":
        jobs: list[JsonValue] = [
            {
                "name": job,
                "template": {"spec": {"template": {"spec": _pod_spec(options, c, pod_field)}}},
            }
            for job, c in targets.items()
        ]
        patch: JsonObject = {"template": {"spec": {"replicatedJobs": jobs}}}
        return [{"manager": MANAGER, "trainingRuntimeSpec": patch}]
    out: list[JsonObject] = []
    for job, containers in targets.items():
        spec = _pod_spec(options, containers, pod_field)
        target: JsonObject = {"targetJobs": [{"name": job}]}
        out.append(
            {**target, "spec": spec} if pod_field == "podTemplateOverrides" else {**target, **spec}
        )
    return out
