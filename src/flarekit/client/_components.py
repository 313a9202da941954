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
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

import flarekit_models
from flarekit._json import JsonValue
from flarekit._validation import ConfigError, ValidationReport
from flarekit.client._head import HeadMetadata, head_of
from flarekit.client._json_patch import PatchOperation
from flarekit_models.batch import v1 as batch_v1

__all__ = [
    "ALLOWED_COMPONENTS",
    "check_appwrapper",
    "check_patch_components",
    "is_appwrapper",
    "wrapped_templates",
]

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

        return lambda data: batch_v1.JobTemplateSpec.model_validate(
            {k: v for k, v in data.items() if k in ("metadata", "spec")}
        )

    return flarekit_models.resource_model(api_version, kind).model_validate


def _check_template(
    report: ValidationReport, field: str, template: object, namespace: str | None
) -> None:
    from pydantic import ValidationError

    if not isinstance(template, Mapping):
        report.add(field, template, "not an object", f"one of {_ALLOWED_TEXT}")
        return
    head = head_of(template)
    if (head.api_version, head.kind) not in ALLOWED_COMPONENTS:
        why = (
            "the AppWrapper controller runs it, but flarekit has no model to check it with "
            "(check_components=False writes it unchecked)"
            if (head.api_version, head.kind) in _UNCHECKED
            else "not a kind the AppWrapper controller runs as a workload"
        )
        report.add(field, head.type_text or None, why, f"one of {_ALLOWED_TEXT}")
        return
    own = head.metadata.namespace
    if own and namespace and own != namespace:
        report.add(
            f"{field}.metadata.namespace",
            own,
            "the AppWrapper controller creates components only in the AppWrapper's namespace",
            f"{namespace!r} or no namespace",
        )
    try:
        _validator(head.api_version, head.kind)(template)
    except ValidationError as exc:
        report.add_model_errors(field, exc, f"a valid {head.kind}")


def _list(value: object) -> object:
    return value if isinstance(value, list) else []


def _object(value: object) -> object:
    return value if isinstance(value, Mapping) else {}


#: A list, or empty when the JSON holds anything else there.
_List = Annotated[list[object], BeforeValidator(_list)]


class _Item(BaseModel):
    """An entry of v1beta2's ``spec.components`` or MCAD's ``spec.resources.GenericItems``:
    the wrapped object, as given (whatever it is; set only when the key is there)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    template: object = None
    generictemplate: object = None


class _Resources(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)

    generic_items: _List = Field(default_factory=list, alias="GenericItems")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    components: _List = Field(default_factory=list)
    resources: Annotated[_Resources, BeforeValidator(_object)] = Field(default_factory=_Resources)


class _Wrapper(BaseModel):
    """The parts of AppWrapper JSON (a whole object or a merge patch) that hold objects.

    Read leniently: the JSON is what is being checked, so a part of the wrong type is empty
    here (the AppWrapper's own model, or the API server, refuses it)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    metadata: Annotated[HeadMetadata, BeforeValidator(_object)] = Field(
        default_factory=HeadMetadata
    )
    spec: Annotated[_Spec, BeforeValidator(_object)] = Field(default_factory=_Spec)


def wrapped_templates(data: Mapping[str, object]) -> list[tuple[str, object]]:
    """(path, template) of every object AppWrapper `data` (JSON) holds, as stored (not
    copies): v1beta2's ``spec.components[].template``, MCAD's
    ``spec.resources.GenericItems[].generictemplate``."""
    spec = _Wrapper.model_validate(data).spec
    out: list[tuple[str, object]] = []
    for i, entry in enumerate(spec.components):
        item = _Item.model_validate(entry) if isinstance(entry, Mapping) else None
        if item is not None and "template" in item.model_fields_set:
            out.append((f"spec.components[{i}].template", item.template))
    for i, entry in enumerate(spec.resources.generic_items):
        item = _Item.model_validate(entry) if isinstance(entry, Mapping) else None
        if item is not None and "generictemplate" in item.model_fields_set:
            where = f"spec.resources.GenericItems[{i}].generictemplate"
            out.append((where, item.generictemplate))
    return out


def check_appwrapper(data: Mapping[str, object], namespace: str | None) -> None:
    """Raise `ConfigError` naming every component of AppWrapper `data` (JSON) that is not an
    allowed kind, not valid, or meant for another namespace than `namespace`."""
    name = _Wrapper.model_validate(data).metadata.name
    report = ValidationReport(f"AppWrapper {name!r}" if name else "AppWrapper")
    for field, template in wrapped_templates(data):
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
        operation = PatchOperation.model_validate(op)
        path, value = operation.path, operation.value
        parts = path.split("/")[1:]
        if parts[:2] not in (["spec", "components"], ["spec", "resources"]):
            continue
        if operation.op == "remove":
            continue
        if parts == ["spec", "components"] and isinstance(value, list):
            holder: dict[str, object] = {"spec": {"components": value}}
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
