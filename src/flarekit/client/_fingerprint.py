"""A fingerprint of what a create sends, carried by the created object.

Why: a create is not idempotent, so it is never retried; when its answer is lost (a timeout)
the server may have created the object all the same, and sending it again would fail with
`AlreadyExists`. An annotation holding a digest of the sent object lets the client read the
object back and recognise it as the one it sent, both right after the lost answer and when
the caller creates the same object again. The digest covers everything sent but `status`
and the annotation itself, so a different object of the same name is never taken for ours.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from flarekit._products import CREATED_FROM
from flarekit.client._codec import dump, dump_json, load_json

if TYPE_CHECKING:
    from flarekit_models import KubeResource

__all__ = ["CREATED_FROM", "fingerprinted"]


def fingerprinted(obj: KubeResource) -> tuple[bytes, str]:
    """The JSON body to create `obj` with, carrying its fingerprint, and the fingerprint."""
    data: dict[str, Any] = load_json(dump(obj))  # type: ignore[assignment]
    meta = data.setdefault("metadata", {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != CREATED_FROM}
    meta["annotations"] = annotations
    sent = {k: v for k, v in data.items() if k != "status"}
    canonical = dump_json(sent, sort_keys=True)
    fingerprint = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:40]
    annotations[CREATED_FROM] = fingerprint
    return dump_json(data).encode(), fingerprint
