"""The real API server as the judge: cases sent to a ControlPlane, dry run.

``flarekit_testing.ControlPlane`` runs a real kube-apiserver with the CRDs of the releases it
is given. Each case is POSTed with ``dryRun=All`` (pruned, defaulted and validated, never
stored) as JSON text, so that NaN reaches the server as the literal a client would send.

Only two answers are a verdict: ``201`` (accepted, with the object as the server would store
it) and a ``Status`` of ``422 Invalid`` or ``400 BadRequest`` (refused; a 422 names the path
of each cause). Anything else, a transport error, a timeout or another status, is
:class:`ServerError`: the case was not judged, and the campaign fails instead of counting it
as a refusal.

``status`` is left out of what is sent: on create, the status subresource makes the server
drop it without checking it, while the reference (like an update of ``/status``) checks it.
"""

from __future__ import annotations

import copy
import http.client
import json
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from verdicts import dotted

from flarekit_models import RESOURCES, lookup
from flarekit_models._crds import default_releases
from flarekit_testing import ApiError, ControlPlane
from flarekit_testing.controlplane._rest import collection_path

JSON = dict[str, Any]
#: The cause the server adds when it skipped CEL rules because of other errors (no place).
_SKIPPED_RULES = "some validation rules were not checked"


class ServerError(RuntimeError):
    """The server gave no verdict on a case (transport failure, or an unexpected answer)."""


@dataclass
class ServerVerdict:
    """What the real API server answered to one dry-run create."""

    accepted: bool
    code: int
    message: str = ""
    #: Where each cause of a 422 is, as dotted paths (``spec.a.0.b``); CEL rules' apart.
    paths: set[str] = field(default_factory=set)
    cel_paths: set[str] = field(default_factory=set)
    #: The object as the server would store it (pruned and defaulted), when accepted.
    stored: JSON | None = None
    #: Whether the case was sent in its kind's storage version. In another version, what is
    #: stored went through the CRD's conversion (without the operator's conversion webhook:
    #: a rename, and pruning by the storage version's schema).
    in_storage_version: bool = True

    @property
    def undecodable(self) -> bool:
        """Refused before validation, as a body that is not JSON it can decode (no paths)."""
        return not self.accepted and self.code == 400


def cel_messages(schema: JSON) -> list[str]:
    """Every CEL rule's fixed message (or the "failed rule" text the server uses without one)."""
    found: list[str] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations", ()):
                found.append(rule.get("message") or f"failed rule: {rule.get('rule', '')}")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def is_cel_message(message: str, schema: JSON) -> bool:
    """Whether a cause's message is one of the schema's CEL rules failing (or the server
    saying it could not evaluate one, e.g. over its cost budget)."""
    if "failed rule: " in message or "estimated rule cost exceeds budget" in message:
        return True
    return any(text and text in message for text in cel_messages(schema))


def plane_releases(family: str) -> dict[str, str]:
    """The releases a ControlPlane needs to judge `family`'s cases: the default releases when
    they serve every kind of the family in the version its model is generated from, else
    the releases that do (appwrapper-mcad: MCAD's CRD, which the default AppWrapper's
    replaces, since both are appwrappers.workload.codeflare.dev)."""
    sources = {r.served_by[-1] for r in RESOURCES if r.family == family}
    defaults = default_releases()
    if all(defaults.get(s.split("@")[0]) == s.split("@")[1] for s in sources):
        return dict(defaults)
    return dict(s.split("@") for s in sorted(sources))


class RealServer:
    """Dry-run creates against a running ControlPlane that serves ``releases``' CRDs."""

    def __init__(self, plane: ControlPlane, releases: Mapping[str, str] | None = None) -> None:
        self.plane = plane
        self.releases = dict(releases if releases is not None else default_releases())

    def serves(self, api_version: str, kind: str) -> bool:
        """Whether the plane serves this kind's version from the release the model (and the
        reference) are generated from: the newest pinned release that serves it."""
        return _source_release(api_version, kind) in {f"{f}@{t}" for f, t in self.releases.items()}

    def request_body(self, obj: JSON) -> JSON:
        """What is sent: the case without ``status``, in the namespace of the request."""
        body = {k: v for k, v in obj.items() if k != "status"}
        metadata = copy.deepcopy(body.get("metadata") or {})
        metadata.pop("namespace", None)
        metadata.setdefault("name", "fuzz-case")
        body["metadata"] = metadata
        return body

    def judge(self, body: JSON, schema: JSON) -> ServerVerdict:
        """The server's verdict on ``body`` (see request_body), its causes split into the
        schema's CEL rules and the rest. Raises ServerError when there is none."""
        group, _, version = str(body["apiVersion"]).rpartition("/")
        info = lookup(str(body["apiVersion"]), str(body["kind"]))
        resource = self.plane.resource(f"{info.plural}.{group}")
        path = collection_path(resource, version, "default" if resource.namespaced else None)
        text = json.dumps(body)  # NaN and Infinity go as the literals JSON does not have
        try:
            stored = self.plane.rest.request("POST", path, text.encode(), query={"dryRun": "All"})
        except ApiError as exc:
            if exc.code not in (400, 422):
                message = f"the server answered {exc.code} {exc.reason}: {exc.message}"
                raise ServerError(message) from exc
            return _refusal(exc, schema)
        except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
            raise ServerError(f"no answer from the server: {type(exc).__name__}: {exc}") from exc
        in_storage = resource.storage_version == version
        return ServerVerdict(True, 201, stored=stored, in_storage_version=in_storage)


def cause_place(where: str, message: str) -> str:
    """Where a Status cause is, in dotted form. kube-openapi words some errors without a
    field (the API server prints "<nil>"), naming the place in the message instead:
    '... must be of type integer with format int32 in spec.a', '"spec.a" must validate at
    least one schema (anyOf)'; with neither, the place is the object itself."""
    if where in ("", "<nil>"):
        named = re.search(r'"([^"\s]+)" must validate|(?<= in )(\S+)$', message)
        where = next((g for g in named.groups() if g), "") if named else ""
    return dotted(where)


def _refusal(exc: ApiError, schema: JSON) -> ServerVerdict:
    verdict = ServerVerdict(False, exc.code, " ".join(exc.message.split()))
    for cause in (exc.details or {}).get("causes") or ():
        where, message = str(cause.get("field") or ""), str(cause.get("message") or "")
        if _SKIPPED_RULES in message:
            continue
        if is_cel_message(message, schema):
            verdict.cel_paths.add(cause_place(where, message))
        else:
            verdict.paths.add(cause_place(where, message))
    if exc.code == 422 and not (verdict.paths or verdict.cel_paths):
        raise ServerError(f"a 422 without a cause that names a field: {verdict.message}")
    return verdict


@cache
def _source_release(api_version: str, kind: str) -> str:
    return lookup(api_version, kind).served_by[-1]
