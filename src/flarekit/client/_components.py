"""What an AppWrapper may hold: the kinds the AppWrapper controller runs, each one valid.

Why: an AppWrapper's component template is an untyped RawExtension, so anything fits in it,
and the controller creates whatever it holds with its own, broad permissions: a Secret, a
ClusterRoleBinding or a Pod in another namespace would be created as easily as a RayCluster.
The CodeFlare design is that the SDK creates only known, typed resources. So before an
AppWrapper is written, every component must be one of the kinds whose pods the controller
accounts for (and flarekit has a model to check it with), valid against that model, and in
the AppWrapper's own namespace; anything else is refused before any request, naming the
component and the allowed kinds. The controller also runs Deployments and StatefulSets, but
flarekit has no model to check them with, so they need the explicit opt-out
(``check_components=False`` on the `Client` write).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flarekit._json import JsonObject, JsonValue
from flarekit._validation import ConfigError, ValidationReport

__all__ = ["ALLOWED_COMPONENTS", "check_appwrapper", "check_patch_components", "is_appwrapper"]

_GROUP = "workload.codeflare.dev"

# apiVersion, kind -> how to validate the whole object
ALLOWED_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("v1", "Pod"),
    ("batch/v1", "Job"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("ray.io/v1", "RayCluster"),
    ("ray.io/v1", "RayJob"),
)
_ALLOWED_TEXT = ", ".join(f"{v} {k}" for v, k in ALLOWED_COMPONENTS)
_UNCHECKED = {("apps/v1", "Deployment"), ("apps/v1", "StatefulSet")}


def is_appwrapper(kind: type[object]) -> bool:
    """Whether a model class is an AppWrapper (either version)."""
    info = kind.resource_info() if hasattr(kind, "resource_info") else None
    return info is not None and info.group == _GROUP and info.kind == "AppWrapper"


def _validator(api_version: str, kind: str) -> Callable[[Mapping[str, JsonValue]], object]:
    if (api_version, kind) == ("batch/v1", "Job"):  # no Job model: its parts are modelled
        from flarekit_models.batch.v1 import JobTemplateSpec

        return lambda data: JobTemplateSpec.model_validate(
            {k: v for k, v in data.items() if k in ("metadata", "spec")}
        )
    from flarekit_models._registry import resource_model

    return resource_model(api_version, kind).model_validate


def _check_template(
    report: ValidationReport, field: str, template: object, namespace: str | None
) -> None:
    from pydantic import ValidationError

    if not isinstance(template, Mapping):
        report.add(field, template, "not an object", f"one of {_ALLOWED_TEXT}")
        return
    api_version, kind = str(template.get("apiVersion") or ""), str(template.get("kind") or "")
    shown = f"{api_version} {kind}".strip()
    if (api_version, kind) not in ALLOWED_COMPONENTS:
        why = (
            "the AppWrapper controller runs it, but flarekit has no model to check it with "
            "(check_components=False writes it unchecked)"
            if (api_version, kind) in _UNCHECKED
            else "not a kind the AppWrapper controller runs as a workload"
        )
        report.add(field, shown or None, why, f"one of {_ALLOWED_TEXT}")
        return
    meta = template.get("metadata")
    own = meta.get("namespace") if isinstance(meta, Mapping) else None
    if own and namespace and own != namespace:
        report.add(
            f"{field}.metadata.namespace",
            own,
            "the AppWrapper controller creates components only in the AppWrapper's namespace",
            f"{namespace!r} or no namespace",
        )
    try:
        _validator(api_version, kind)(template)
    except ValidationError as exc:
        report.add_model_errors(field, exc, f"a valid {kind}")


def _templates(data: Mapping[str, JsonValue]) -> list[tuple[str, object]]:
    """(path, template) of every component: v1beta2's components or MCAD's GenericItems."""
    spec = data.get("spec")
    if not isinstance(spec, Mapping):
        return []
    out: list[tuple[str, object]] = []
    components = spec.get("components")
    if isinstance(components, list):
        for i, item in enumerate(components):
            if isinstance(item, Mapping) and "template" in item:
                out.append((f"spec.components[{i}].template", item["template"]))
    resources = spec.get("resources")
    items = resources.get("GenericItems") if isinstance(resources, Mapping) else None
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, Mapping) and "generictemplate" in item:
                where = f"spec.resources.GenericItems[{i}].generictemplate"
                out.append((where, item["generictemplate"]))
    return out


def check_appwrapper(data: Mapping[str, JsonValue], namespace: str | None) -> None:
    """Raise `ConfigError` naming every component of AppWrapper `data` (JSON) that is not an
    allowed kind, not valid, or meant for another namespace than `namespace`."""
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    report = ValidationReport(f"AppWrapper {name!r}" if name else "AppWrapper")
    for field, template in _templates(data):
        _check_template(report, field, template, namespace)
    report.raise_if_problems()


def check_patch_components(patch: object, namespace: str | None) -> None:
    """The same rule for a JSON patch of an AppWrapper: values added under the components
    are checked; an operation inside a wrapped template cannot be, and is refused."""
    if not isinstance(patch, list):
        return
    report = ValidationReport("AppWrapper patch")
    for index, op in enumerate(patch):
        if not isinstance(op, Mapping):
            continue
        path = str(op.get("path") or "")
        parts = path.split("/")[1:]
        if parts[:2] not in (["spec", "components"], ["spec", "resources"]):
            continue
        value = op.get("value")
        if op.get("op") == "remove":
            continue
        if parts == ["spec", "components"] and isinstance(value, list):
            holder: JsonObject = {"spec": {"components": value}}
        elif len(parts) == 3 and parts[1] == "components":
            holder = {"spec": {"components": [value]}}
        elif len(parts) == 4 and parts[1] == "components" and parts[3] == "template":
            holder = {"spec": {"components": [{"template": value}]}}
        elif len(parts) >= 4 and parts[1] == "components" and parts[3] == "podSets":
            continue
        else:
            report.add(
                f"patch[{index}].path",
                path,
                "changes part of a wrapped object, which cannot be checked on its own",
                "whole components or templates (or check_components=False)",
            )
            continue
        try:
            check_appwrapper(holder, namespace)
        except ConfigError as exc:
            for problem in exc.problems:
                report.add(f"patch[{index}].value ({problem.field})", problem.value,
                           problem.message, problem.expected)  # fmt: skip
    report.raise_if_problems()
