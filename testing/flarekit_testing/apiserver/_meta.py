"""Rules for object metadata and the spec/status split, as the custom resource strategy has them.

These decide what a client may set (names, finalizers), what the server owns (uid,
creationTimestamp, generation, resourceVersion, deletionTimestamp), when generation moves
(any change outside metadata and, with a status subresource, status), and which half of the
object each endpoint may change when the status subresource is enabled.
"""

from __future__ import annotations

import datetime
import secrets
import uuid
from typing import Any

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._json import copy_json

JSON = dict[str, Any]

# Characters the apiserver uses for generateName suffixes (no vowels, no look-alikes).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
SERVER_OWNED = ("uid", "creationTimestamp", "generation", "deletionTimestamp")


def timestamp() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def generate_name(prefix: str) -> str:
    """`generateName` plus five random characters, prefix trimmed as the apiserver does."""
    suffix = "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(5))
    return prefix[: 63 - 5] + suffix if len(prefix) > 58 else prefix + suffix


def validate_meta_types(obj: JSON) -> list[Cause]:
    """Type errors in labels, annotations and finalizers that would make the object unusable."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [Cause("FieldValueRequired", "Required value", "metadata")]
    causes = []
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            causes.append(
                Cause(
                    "FieldValueTypeInvalid",
                    "Invalid value: must be a map of strings to strings",
                    f"metadata.{key}",
                )
            )
    finalizers = meta.get("finalizers")
    if finalizers is not None and (
        not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers)
    ):
        causes.append(
            Cause(
                "FieldValueTypeInvalid",
                "Invalid value: must be a list of strings",
                "metadata.finalizers",
            )
        )
    return causes


def new_uid() -> str:
    return str(uuid.uuid4())


def strip_for_create(obj: JSON) -> None:
    """Drop what a client cannot set on create (the server fills it in)."""
    meta = obj.setdefault("metadata", {})
    for key in (*SERVER_OWNED, "resourceVersion", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(key, None)
    meta.pop("managedFields", None)


def copy_server_fields(new: JSON, old: JSON) -> None:
    """Keep the server-owned metadata of `old` in `new` whatever the client sent."""
    new_meta, old_meta = new.setdefault("metadata", {}), old.get("metadata", {})
    for key in (*SERVER_OWNED, "deletionGracePeriodSeconds", "managedFields"):
        if key in old_meta:
            new_meta[key] = copy_json(old_meta[key])
        else:
            new_meta.pop(key, None)
    new_meta.pop("selfLink", None)


def isolate_for_main(new: JSON, old: JSON | None, status_subresource: bool) -> None:
    """With a status subresource, the main endpoint cannot change status."""
    if not status_subresource:
        return
    if old is not None and "status" in old:
        new["status"] = copy_json(old["status"])
    else:
        new.pop("status", None)


def isolate_for_status(new: JSON, old: JSON) -> JSON:
    """Through /status only status changes; everything else is taken from `old`."""
    out = copy_json(old)
    if "status" in new:
        out["status"] = copy_json(new["status"])
    else:
        out.pop("status", None)
    return out


def _non_metadata(obj: JSON) -> JSON:
    return {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}


def bump_generation(new: JSON, old: JSON) -> None:
    """Generation moves on any change outside metadata (status excluded by isolation)."""
    generation = int(old.get("metadata", {}).get("generation") or 1)
    if _non_metadata(new) != _non_metadata(old):
        generation += 1
    new["metadata"]["generation"] = generation


def without_volatile(obj: JSON) -> JSON:
    """The object minus what changes on every write, to recognise no-op updates."""
    out = copy_json(obj)
    meta = out.get("metadata", {})
    meta.pop("resourceVersion", None)
    meta.pop("managedFields", None)
    return out


def added_finalizers(new: JSON, old: JSON) -> list[str]:
    before = set(old.get("metadata", {}).get("finalizers") or [])
    return [f for f in new.get("metadata", {}).get("finalizers") or [] if f not in before]


def go_string_list(values: list[str]) -> str:
    """How Go's %#v prints a []string, which apiserver messages embed."""
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"
