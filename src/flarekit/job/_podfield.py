"""Creating a TrainJob in the pod-customisation field the server's Trainer release has.

Which of ``runtimePatches`` / ``podTemplateOverrides`` / ``podSpecOverrides`` a cluster
accepts is learnt without reading its CRDs (which users often may not): the create itself is
sent with ``fieldValidation=Strict``, and a server without the field answers 400 naming it as
unknown, before admission and without storing anything. The next field is then tried, and the
one that worked is kept in the client's facts (`Client.forget()` drops it), so later creates
take one request. Where the TrainJob CRD can be read (one request, only for a job that
customises its pods: the field differs between Trainer releases), the right field is used
from the first create. Other unknown fields (``spec.activeDeadlineSeconds`` before Trainer
v2.3) are refused naming the option.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import flarekit.client
import flarekit.compat
from flarekit._validation import ConfigError, Problem
from flarekit.job._podopts import POD_FIELDS, RELEASES, PodField, PodOptions, unsupported

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models.trainer.v1alpha1 import TrainJob as TrainJobModel

__all__ = ["OPTION_FIELDS", "create_trainjob", "known_pod_field"]

#: TrainJob fields some Trainer releases lack, and the option that sets each.
OPTION_FIELDS = {
    "spec.activeDeadlineSeconds": ("active_deadline_seconds", "Trainer v2.3 and later"),
}
_UNKNOWN = re.compile(r'unknown field "([^"]+)"')
TRAINJOB_API = "trainer.kubeflow.org/v1alpha1"


def known_pod_field(client: Client) -> PodField | None:
    """The field a create on `client`'s cluster took, if any yet (the client's facts)."""
    for pod_field in POD_FIELDS:
        if client.facts.has_field(TRAINJOB_API, "TrainJob", f"spec.{pod_field}"):
            return pod_field
    return None


def _negotiated_pod_field(client: Client) -> PodField | None:
    """The field the cluster's Trainer release has, when its TrainJob CRD (or discovery)
    says so for certain; None leaves it to trying."""
    release = flarekit.compat.family_release(client, "trainer", crds=False)
    return flarekit.compat.pod_field_of(flarekit.compat.with_crd_of(client, release, "TrainJob"))


def _refuse_unsupported(options: PodOptions, pod_field: PodField) -> None:
    names = unsupported(options, pod_field)
    if names:
        raise ConfigError(
            [
                Problem(
                    name,
                    "(set)",
                    f"this cluster's Trainer takes pod customisation in {pod_field} "
                    f"({RELEASES[pod_field]}), which has no {name}",
                    f"no {name}, or Trainer v2.1 or later on the cluster",
                )
                for name in names
            ],
            "TrainJob",
        )


def _unknown_fields(exc: Exception) -> list[str]:
    if not isinstance(exc, flarekit.client.ApiError) or exc.code != 400:
        return []
    return _UNKNOWN.findall(exc.message)


def create_trainjob(
    client: Client,
    build: Callable[[PodField | None], TrainJobModel],
    options: PodOptions,
) -> TrainJobModel:
    """Create the TrainJob `build(pod_field)` returns, in the pod field negotiation found
    for the cluster's Trainer release, else trying pod fields newest first."""
    known = (known_pod_field(client) or _negotiated_pod_field(client)) if options else None
    candidates: tuple[PodField | None, ...] = (
        (None,) if not options else (known,) if known else POD_FIELDS
    )
    for pod_field in candidates:
        if pod_field is not None:
            _refuse_unsupported(options, pod_field)
        body: TrainJobModel = flarekit.compat.prepare_write(
            client,
            build(pod_field),
            parameters=[(path, option) for path, (option, _) in OPTION_FIELDS.items()],
            subject="TrainJob",
        )
        try:
            created = client.create(body, field_validation="Strict")
        except Exception as exc:
            unknown = _unknown_fields(exc)
            if pod_field is not None and f"spec.{pod_field}" in unknown and known is None:
                client.facts.learn_field(TRAINJOB_API, "TrainJob", f"spec.{pod_field}", False)
                continue
            problems = [
                Problem(
                    OPTION_FIELDS[path][0],
                    "(set)",
                    f"this cluster's Trainer has no TrainJob {path}",
                    f"leave it unset, or {OPTION_FIELDS[path][1]} on the cluster",
                )
                for path in unknown
                if path in OPTION_FIELDS
            ]
            if problems:
                raise ConfigError(problems, "TrainJob") from exc
            raise
        if pod_field is not None:
            client.facts.learn_field(TRAINJOB_API, "TrainJob", f"spec.{pod_field}", True)
        return created
    tried = ", ".join(POD_FIELDS)
    raise ConfigError(
        [
            Problem(
                ", ".join(options.used()),
                "(set)",
                f"this cluster's TrainJob has none of the pod customisation fields ({tried})",
                "no pod customisation, or Trainer v2.0 or later on the cluster",
            )
        ],
        "TrainJob",
    )
