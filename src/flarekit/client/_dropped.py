"""Telling the caller that a write lost fields: `PrunedFieldsWarning`, or `PrunedFields`.

After every write the client compares the request body with the stored object the server
answers with (`flarekit.client._pruning`). Fields that did not make it are reported by path, once:

* by default, as one `PrunedFieldsWarning` per write listing every dropped path. The
  server's own ``unknown field "spec.x"`` warnings (it sends them under its default
  ``fieldValidation=Warn``) are held back for such writes, since the warning covers them;
  one whose field the comparison did not find is still shown as a `ServerWarning`.
* with ``field_validation="Warn"`` the caller asked for the server's warnings: those are
  shown, and the `PrunedFieldsWarning` lists only what the server did not announce (dropped
  by a conversion or a webhook, say).
* with ``field_validation="Ignore"`` the caller asked for unknown fields to be dropped
  quietly, so nothing is warned.
* with ``strict_fields=True`` (client or call) any dropped field raises `PrunedFields`. It
  comes *after* the write: the server has already stored the object without those fields,
  so the error says so and carries the stored object (``obj``) for the caller to delete
  (after a create) or write again; flarekit does not undo the write itself, as an update has
  no safe undo.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from flarekit.client._errors import Operation
from flarekit.client._pruning import Path, apiserver_path, render_path
from flarekit.client._warnings import ServerWarning, _outside_flarekit

if TYPE_CHECKING:
    from flarekit_models import KubeResource

__all__ = ["PrunedFields", "PrunedFieldsWarning", "is_unknown_field", "report_pruned"]

_UNKNOWN = re.compile(r'^unknown field "(.*)"$')
_WRITTEN = {
    "create": "was created without them",
    "update": "was updated without them",
    "patch": "was patched without them",
}


def is_unknown_field(text: str) -> bool:
    """Whether a server warning says a field of the request was unknown (and dropped)."""
    return _UNKNOWN.match(text) is not None


def _describe(operation: Operation, paths: Sequence[str]) -> str:
    return (
        f"{operation.describe()}: the server did not keep {', '.join(paths)} (its schema for "
        "this kind lacks them, as in an older release, or a conversion or webhook removed them)"
    )


class PrunedFieldsWarning(UserWarning):
    """A write succeeded, but the server dropped fields of it; `paths` lists them."""

    def __init__(self, operation: Operation, paths: Sequence[str]) -> None:
        self.operation = operation
        self.paths = list(paths)
        super().__init__(_describe(operation, self.paths) + "; the object was stored without them")


class PrunedFields(Exception):
    """With ``strict_fields=True``: a write dropped fields (`paths`).

    The write has happened: `obj` is the object as the server now stores it (without the
    fields). Delete it (after a create) or write it again to undo it.
    """

    def __init__(self, operation: Operation, paths: Sequence[str], obj: KubeResource) -> None:
        self.operation = operation
        self.paths = list(paths)
        self.obj = obj
        done = _WRITTEN.get(operation.verb, "was written without them")
        hint = (
            "delete it (client.delete) if you do not want it so"
            if operation.verb == "create"
            else "write it again to change it"
        )
        super().__init__(
            f"{_describe(operation, self.paths)}. The object {done}: it is on the server now "
            f"(this error's .obj is the stored object); {hint}, or use a cluster whose release "
            "has these fields"
        )


def report_pruned(
    operation: Operation,
    paths: Iterable[Path],
    server_warnings: Iterable[str],
    obj: KubeResource,
    *,
    strict: bool,
    field_validation: str | None,
) -> None:
    """Report the dropped `paths` of a write as the module docstring describes.

    `server_warnings` are all the texts of the response's `Warning` headers; with
    `field_validation` None the unknown-field ones among them were held back.
    """
    found = list(paths)
    unknown = {m.group(1) for m in map(_UNKNOWN.match, server_warnings) if m is not None}
    if field_validation is None:
        covered = {apiserver_path(p) for p in found}
        for text in sorted(unknown - covered):
            warnings.warn(f'unknown field "{text}"', ServerWarning, stacklevel=_outside_flarekit())
    if not found:
        return
    if strict:
        raise PrunedFields(operation, [render_path(p) for p in found], obj)
    if field_validation == "Ignore":
        return
    announced = unknown if field_validation == "Warn" else set()
    silent = [render_path(p) for p in found if apiserver_path(p) not in announced]
    if silent:
        warnings.warn(PrunedFieldsWarning(operation, silent), stacklevel=_outside_flarekit())
