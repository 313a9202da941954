"""The real API server as the judge of the reference: cases sent to a ControlPlane, dry run.

``flarekit_testing.ControlPlane`` runs a real kube-apiserver with the default upstream
releases' CRDs. Each case is POSTed with ``dryRun=All`` (validated and defaulted, never
stored) as JSON text, so that NaN reaches the server as the literal a client would send.
Two things differ from the reference's view, by construction:

* ``status`` is left out: on create, the status subresource makes the server drop it
  without checking it, while the reference (like an update of ``/status``) checks it;
* CEL rules (``x-kubernetes-validations``) are evaluated by the server only; a refusal that
  quotes a rule of the schema is counted as ``cel``, not as a disagreement.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any

from flarekit_models import lookup
from flarekit_models._crds import default_releases
from flarekit_testing import ControlPlane
from flarekit_testing.controlplane._rest import collection_path

JSON = dict[str, Any]


@cache
def served_by_default(api_version: str, kind: str) -> bool:
    """Whether the default releases (what a ControlPlane serves) serve this kind's version
    from the release the model is generated from."""
    info = lookup(api_version, kind)
    family, tag = info.served_by[-1].split("@")
    return default_releases().get(family) == tag


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


class RealServer:
    """Dry-run creates against a running ControlPlane."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane = plane

    def request_body(self, obj: JSON) -> JSON:
        """What is sent: the case without ``status``, in the namespace of the request."""
        body = {k: v for k, v in obj.items() if k != "status"}
        metadata = copy.deepcopy(body.get("metadata") or {})
        metadata.pop("namespace", None)
        metadata.setdefault("name", "fuzz-case")
        body["metadata"] = metadata
        return body

    def admit(self, body: JSON) -> tuple[bool, str]:
        """Whether the server accepts ``body`` (see request_body), and its message if not."""
        group, _, version = str(body["apiVersion"]).rpartition("/")
        resource = self.plane.resource(
            f"{lookup(str(body['apiVersion']), str(body['kind'])).plural}.{group}"
        )
        path = collection_path(resource, version, "default" if resource.namespaced else None)
        text = json.dumps(body)  # NaN and Infinity go as the literals JSON does not have
        try:
            self.plane.rest.request("POST", path, text.encode(), query={"dryRun": "All"})
        except Exception as exc:  # an ApiError with the server's Status message
            return False, " ".join(str(exc).split())
        return True, ""


def is_cel_refusal(message: str, schema: JSON) -> bool:
    """Whether a refusal quotes one of the schema's CEL rules."""
    return any(text and text in message for text in cel_messages(schema)) or bool(
        re.search(r"failed rule: ", message)
    )
