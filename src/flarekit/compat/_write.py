"""The last step before a facade writes an object: the right version, and only fields the
server keeps.

Why: a facade builds its objects in one version (KubeRay ``v1``, AppWrapper ``v1beta2``,
Kueue in whichever version it was asked for). The cluster may serve another version, or the
same version with fewer fields. `prepare_write` asks negotiation about the object's family,
converts the object to the newest version the server serves for its kind (through
`flarekit.compat.convert`, which refuses by path what the target cannot express), moves
Trainer's pod customisation into the field the release has, and refuses every field the
release lacks, naming it, the releases that have it and the release the cluster runs. Objects
inside an AppWrapper are checked against their own family's release. Nothing is sent but
reads (discovery, and the CRD of the kind only when the object sets a field some pinned
releases lack), so a refusal leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import flarekit_models
from flarekit._json import JsonValue
from flarekit.client import NotServed
from flarekit.compat._cel import RulesFailed, crd_schema, rule_failures
from flarekit.compat._errors import NoConversion
from flarekit.compat._families import FAMILIES, Family, family_for
from flarekit.compat._fields import check_fields, missing_fields, varying_fields
from flarekit.compat._head import head_of
from flarekit.compat._negotiate import family_release, with_crd_of
from flarekit.compat._registry import convert
from flarekit.compat._releases import FamilyRelease
from flarekit.compat._trainer_pod import move_pod_field, pod_field_of
from flarekit_models import KubeModel, KubeResource, lookup
from flarekit_models.appwrapper.v1beta2 import AppWrapper

if TYPE_CHECKING:
    from flarekit.client import Client

__all__ = ["prepare_write", "write_version"]


def _release_serving(
    client: Client, fam: Family, kind: str
) -> tuple[FamilyRelease | None, str | None]:
    """The installed family of `fam`'s group that serves `kind`, and its newest version, as
    discovery says (the CRDs are read only for the fields that need them)."""
    siblings = [fam, *(f for f in FAMILIES if f.group == fam.group and f is not fam)]
    for each in siblings:
        release = family_release(client, each.name, crds=False)
        version = release.newest(kind) if release.installed else None
        if version is not None:
            return release, version
    return None, None


def write_version(client: Client, api_version: str, kind: str) -> str:
    """The apiVersion to write a `kind` object of `api_version` in on `client`'s cluster:
    the newest version the server serves for the kind (unchanged when nothing is known)."""
    fam = family_for(api_version)
    if fam is None:
        return api_version
    _, version = _release_serving(client, fam, kind)
    return f"{fam.group}/{version}" if version else api_version


def _convert(
    obj: KubeModel | Mapping[str, JsonValue], target: str, release: FamilyRelease
) -> KubeResource | None:
    """`obj` converted to `target`, or None when its own version is served too (write it as
    it is)."""
    try:
        return convert(obj, target)
    except NoConversion as exc:
        head = head_of(obj)
        served = release.served_versions(head.kind)
        if (head.api_version or "").rpartition("/")[2] in served:
            return None
        raise NotServed(
            release.group,
            f"{release.product} on this cluster ({release.release_text()}) serves "
            f"{head.kind} only in {release.group} {', '.join(served)}, and flarekit "
            f"cannot write {head.api_version} {head.kind} there: {exc}",
            served,
        ) from None


def _check_embedded(
    client: Client,
    wrapper: AppWrapper,
    parameters: tuple[tuple[str, str], ...],
    subject: str,
) -> None:
    """Check the objects an AppWrapper holds against their own families' releases."""
    for index, component in enumerate(wrapper.spec.components if wrapper.spec else []):
        template = component.template
        fam = family_for(head_of(template).api_version or "")
        if fam is None:
            continue
        release = family_release(client, fam.name, crds=False)
        if release.installed:
            if varying_fields(template):
                release = with_crd_of(client, release, head_of(template).kind or "")
            if missing_fields(template, release):
                release = family_release(client, release.family)
            check_fields(
                template,
                release,
                parameters=parameters,
                subject=subject,
                prefix=f"spec.components[{index}].template",
            )


def prepare_write(
    client: Client,
    obj: KubeModel | Mapping[str, JsonValue],
    *,
    parameters: Iterable[tuple[str, str]] = (),
    subject: str = "",
    old: KubeModel | Mapping[str, JsonValue] | None = None,
) -> Any:
    """`obj` as it should be sent to `client`'s cluster: a validated model (`obj` itself
    when nothing changed), of the class of the version it is sent in (hence typed `Any`:
    the caller knows which classes its object may become).

    Raises `FieldUnavailable` (a `ConfigError`) for fields the cluster's release lacks,
    `ConversionError` for values the served version cannot express, `NotServed` when the
    kind is served only in a version flarekit cannot convert to, `RulesFailed` (a
    `ConfigError`) for the CEL rules of the release's CRD that the object fails (with `old`,
    the object it replaces, transition rules too). Objects of families that are not
    installed, or of Kubernetes' own kinds, are returned unchanged (the create itself then
    reports what is missing).
    """
    head = head_of(obj)
    api_version, kind = head.api_version or "", head.kind or ""
    #: The object as a model, while it is one (None once the JSON changed without it).
    model = obj if isinstance(obj, KubeResource) else None
    data = obj.to_dict() if isinstance(obj, KubeModel) else dict(obj)
    params = tuple(parameters)
    fam = family_for(api_version)
    if fam is not None:
        release, version = _release_serving(client, fam, kind)
        if release is not None and version is not None:
            target = f"{release.group}/{version}"
            converted = _convert(obj, target, release) if target != api_version else None
            if converted is not None:
                model, data = converted, converted.to_dict()
            if varying_fields(data):
                release = with_crd_of(client, release, kind)
            strict: tuple[str, ...] = ()
            pod_field = pod_field_of(release) if kind == "TrainJob" else None
            if pod_field is not None:
                moved = move_pod_field(data, pod_field)
                if moved != data:
                    model, data = None, moved
                strict = (f"spec.{pod_field}[].",)
            if missing_fields(data, release, strict_under=strict):
                # Refused: name the release exactly (the family's other CRDs, read now).
                release = family_release(client, release.family)
            check_fields(data, release, parameters=params, subject=subject, strict_under=strict)
            _check_rules(data, release, old, subject)
    if model is None:
        model = flarekit_models.resource_model(*_identity(data, api_version, kind)).model_validate(
            data
        )
    if isinstance(model, AppWrapper):
        _check_embedded(client, model, params, subject)
    return model


def _check_rules(
    data: Mapping[str, JsonValue],
    release: FamilyRelease,
    old: KubeModel | Mapping[str, JsonValue] | None,
    subject: str,
) -> None:
    """Raise RulesFailed for the CEL rules of the cluster's release that `data` fails (the
    rules of the release the models are generated from when the cluster's is not known)."""
    head = head_of(data)
    group, _, version = (head.api_version or "").rpartition("/")
    info = lookup(head.api_version or "", head.kind or "")
    family, tag = info.served_by[-1].split("@")
    if release.release is not None and release.family == family:
        tag = release.release
    schema = crd_schema(family, tag, group, version, head.kind or "")
    if schema is None:
        return
    before = old.to_dict() if isinstance(old, KubeModel) else old
    failures = rule_failures(data, schema, before)
    if failures:
        raise RulesFailed(failures, subject)


def _identity(data: Mapping[str, JsonValue], api_version: str, kind: str) -> tuple[str, str]:
    head = head_of(data)
    return head.api_version or api_version, head.kind or kind
