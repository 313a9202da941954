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
reads (discovery and, where allowed, the CRDs), so a refusal leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from flarekit.client._served import NotServed
from flarekit.compat._families import FAMILIES, Family, family_for
from flarekit.compat._fields import check_fields
from flarekit.compat._negotiate import family_release
from flarekit.compat._releases import FamilyRelease
from flarekit.compat._trainer_pod import move_pod_field, pod_field_of
from flarekit_models._base import KubeModel, KubeResource

if TYPE_CHECKING:
    from flarekit.client._client import Client

__all__ = ["prepare_write", "write_version"]


def _release_serving(
    client: Client, fam: Family, kind: str
) -> tuple[FamilyRelease | None, str | None]:
    """The installed family of `fam`'s group that serves `kind`, and its newest version."""
    siblings = [fam, *(f for f in FAMILIES if f.group == fam.group and f is not fam)]
    for each in siblings:
        release = family_release(client, each.name)
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


def _convert(data: dict[str, Any], target: str, release: FamilyRelease) -> dict[str, Any]:
    from flarekit.compat._errors import NoConversion
    from flarekit.compat._registry import convert

    try:
        converted: dict[str, Any] = convert(data, target).to_dict()
        return converted
    except NoConversion as exc:
        served = release.served_versions(str(data.get("kind")))
        if str(data.get("apiVersion", "")).rpartition("/")[2] in served:
            return data  # its own version is served too: write it as it is
        raise NotServed(
            release.group,
            f"{release.product} on this cluster ({release.release_text()}) serves "
            f"{data.get('kind')} only in {release.group} {', '.join(served)}, and flarekit "
            f"cannot write {data.get('apiVersion')} {data.get('kind')} there: {exc}",
            served,
        ) from None


def _check_embedded(
    client: Client, data: Mapping[str, Any], parameters: tuple[tuple[str, str], ...], subject: str
) -> None:
    """Check the objects an AppWrapper holds against their own families' releases."""
    for index, component in enumerate((data.get("spec") or {}).get("components") or []):
        template = component.get("template") if isinstance(component, Mapping) else None
        if not isinstance(template, Mapping) or not template.get("apiVersion"):
            continue
        fam = family_for(str(template.get("apiVersion")))
        if fam is None:
            continue
        release = family_release(client, fam.name)
        if release.installed:
            check_fields(
                template,
                release,
                parameters=parameters,
                subject=subject,
                prefix=f"spec.components[{index}].template",
            )


def prepare_write(
    client: Client,
    obj: KubeModel | Mapping[str, Any],
    *,
    parameters: Iterable[tuple[str, str]] = (),
    subject: str = "",
) -> Any:
    """`obj` as it should be sent to `client`'s cluster: a validated model (`obj` itself
    when nothing changed), of the class of the version it is sent in (hence typed `Any`).

    Raises `FieldUnavailable` (a `ConfigError`) for fields the cluster's release lacks,
    `ConversionError` for values the served version cannot express, `NotServed` when the
    kind is served only in a version flarekit cannot convert to. Objects of families that
    are not installed, or of Kubernetes' own kinds, are returned unchanged (the create
    itself then reports what is missing).
    """
    from flarekit_models._registry import resource_model

    original = obj.to_dict() if isinstance(obj, KubeModel) else dict(obj)
    data = original  # replaced (never changed in place) by each step that changes it
    api_version, kind = str(data.get("apiVersion", "")), str(data.get("kind", ""))
    params = tuple(parameters)
    fam = family_for(api_version)
    if fam is not None:
        release, version = _release_serving(client, fam, kind)
        if release is not None and version is not None:
            target = f"{release.group}/{version}"
            if target != api_version:
                data = _convert(data, target, release)
            strict: tuple[str, ...] = ()
            pod_field = pod_field_of(release) if kind == "TrainJob" else None
            if pod_field is not None:
                data = move_pod_field(data, pod_field)
                strict = (f"spec.{pod_field}[].",)
            check_fields(data, release, parameters=params, subject=subject, strict_under=strict)
        if kind == "AppWrapper":
            _check_embedded(client, data, params, subject)
    if isinstance(obj, KubeResource) and (data is original or data == original):
        return obj  # unchanged: keep the caller's model as it is
    model: KubeResource = resource_model(str(data["apiVersion"]), kind).model_validate(data)
    return model
