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
from typing import Any, Literal

from flarekit._validation import ValidationReport, check_dns1123_subdomain, check_labels

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
    """What the training pods should get on top of the runtime's pod template (JSON dicts)."""

    volumes: Sequence[Mapping[str, Any]] = ()
    volume_mounts: Sequence[Mapping[str, Any]] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: Sequence[Mapping[str, Any]] = ()
    affinity: Mapping[str, Any] | None = None
    service_account: str | None = None
    image_pull_secrets: Sequence[str] = ()

    def used(self) -> list[str]:
        """The options that are set, by parameter name."""
        return [name for name in _OPTIONS if getattr(self, name)]

    def __bool__(self) -> bool:
        return bool(self.used())


def _as_dicts(items: Sequence[Any]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        to_dict = getattr(item, "to_dict", None)
        out.append(to_dict() if callable(to_dict) else dict(item))
    return out


def check_pod_options(report: ValidationReport, **given: Any) -> PodOptions:
    """Validate the pod options (parameter names as keys; None means not set)."""
    from flarekit.cluster._checks import _check_models

    def listed(name: str, kind: str) -> list[dict[str, Any]]:
        value = given.get(name)
        if value is None:
            return []
        value = list(value) if isinstance(value, tuple) else value
        before = len(report)
        _check_models(report, name, value, kind)
        return _as_dicts(value) if len(report) == before else []

    volumes = listed("volumes", "Volume")
    mounts = listed("volume_mounts", "VolumeMount")
    names = {v.get("name") for v in volumes}
    for i, mount in enumerate(mounts):
        if volumes and mount.get("name") not in names:
            report.add(
                f"volume_mounts[{i}].name",
                mount.get("name"),
                "no volume of that name",
                "the name of one of volumes: " + ", ".join(sorted(str(n) for n in names)),
            )
    tolerations = listed("tolerations", "Toleration")
    node_selector = given.get("node_selector") or {}
    if node_selector:
        check_labels(report, "node_selector", node_selector)
    affinity = given.get("affinity")
    if affinity is not None:
        affinity = _check_one(report, "affinity", affinity, "Affinity")
    account = given.get("service_account")
    if account is not None:
        check_dns1123_subdomain(report, "service_account", account)
    secrets = given.get("image_pull_secrets") or []
    if not isinstance(secrets, list | tuple):
        report.add("image_pull_secrets", secrets, "expected a list", "a list of Secret names")
        secrets = []
    for i, secret in enumerate(secrets):
        check_dns1123_subdomain(report, f"image_pull_secrets[{i}]", secret)
    return PodOptions(
        volumes=volumes,
        volume_mounts=mounts,
        node_selector=dict(node_selector) if isinstance(node_selector, Mapping) else {},
        tolerations=tolerations,
        affinity=affinity,
        service_account=account,
        image_pull_secrets=tuple(str(s) for s in secrets),
    )


def _check_one(report: ValidationReport, name: str, value: Any, kind: str) -> dict[str, Any] | None:
    from flarekit.cluster._checks import _check_models

    before = len(report)
    _check_models(report, name, [value], kind)
    for i in range(before, len(report)):  # "affinity[0].x" -> "affinity.x"
        problem = report.problems[i]
        report.problems[i] = type(problem)(
            problem.field.replace(f"{name}[0]", name, 1),
            problem.value,
            problem.message,
            problem.expected,
        )
    return _as_dicts([value])[0] if len(report) == before else None


def unsupported(options: PodOptions, pod_field: PodField) -> list[str]:
    """The options set in `options` that `pod_field` cannot express."""
    if pod_field != "podSpecOverrides":
        return []
    return [name for name in _NOT_IN_POD_SPEC_OVERRIDES if getattr(options, name)]


def _pod_spec(
    options: PodOptions, containers: Sequence[str], pod_field: PodField
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if options.service_account:
        spec["serviceAccountName"] = options.service_account
    if options.node_selector:
        spec["nodeSelector"] = dict(options.node_selector)
    if options.affinity and pod_field != "podSpecOverrides":
        spec["affinity"] = dict(options.affinity)
    if options.tolerations:
        spec["tolerations"] = [dict(t) for t in options.tolerations]
    if options.volumes:
        spec["volumes"] = [dict(v) for v in options.volumes]
    if options.volume_mounts:
        mounts = [dict(m) for m in options.volume_mounts]
        spec["containers"] = [{"name": c, "volumeMounts": mounts} for c in containers]
    if options.image_pull_secrets and pod_field != "podSpecOverrides":
        spec["imagePullSecrets"] = [{"name": s} for s in options.image_pull_secrets]
    return spec


def render(
    options: PodOptions,
    pod_field: PodField,
    targets: Mapping[str, Sequence[str]],
) -> list[dict[str, Any]]:
    """The value of `spec.<pod_field>` applying `options` to the replicated jobs in `targets`
    (job name -> the containers that get the volume mounts)."""
    if not options:
        return []
    if pod_field == "runtimePatches":
        jobs = [
            {
                "name": job,
                "template": {"spec": {"template": {"spec": _pod_spec(options, c, pod_field)}}},
            }
            for job, c in targets.items()
        ]
        patch = {"template": {"spec": {"replicatedJobs": jobs}}}
        return [{"manager": MANAGER, "trainingRuntimeSpec": patch}]
    out = []
    for job, containers in targets.items():
        spec = _pod_spec(options, containers, pod_field)
        entry: dict[str, Any] = {"targetJobs": [{"name": job}]}
        if pod_field == "podTemplateOverrides":
            entry["spec"] = spec
        else:
            entry.update(spec)
        out.append(entry)
    return out
