"""Undoing the creates of a multi-object action that failed halfway, without touching what is
not ours.

Why: an action that writes several objects (Kueue's `apply_all`) must leave nothing behind
when it fails, and must never delete what someone else made or still uses. Three things make
that hard: an answer that never arrives (the write may land after the client gave up), a
second call applying the same objects at the same time, and a delete that itself fails.

So every object a call creates carries this call's mark (`MARK`, a random id) in an
annotation set in the same server-side apply that creates it. The mark says "this call made
it and nobody has relied on it since": any other apply of the object by the same field
manager omits the mark, and server-side apply then removes it; a call that succeeds applies
its objects once more without the mark. A failing call deletes an object only while it still
carries its own mark, with the uid and resourceVersion it read as preconditions (a change in
between makes the delete fail with `Conflict`, and the object is looked at again). An object
found carrying another call's mark is still being created by that call: this call takes it
over (applies it with its own mark) and, when it succeeds, confirms it; if this call fails and
deletes it, the other call's confirmation creates it again should that call succeed. A write
whose answer was lost is re-read until it appears or a settling time has passed. What could
not be undone is named in `RollbackIncomplete`'s message.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flarekit._objects import metadata_of
from flarekit.client._errors import ApiError, Conflict, NotFound

if TYPE_CHECKING:
    from flarekit.client._client import Client
    from flarekit_models._base import KubeResource

__all__ = ["MARK", "Created", "RollbackIncomplete", "mark_of", "new_call_id", "refused", "undo"]

#: The annotation a multi-object action puts on the objects it creates until it succeeds.
MARK = "flarekit.dev/apply-call"
_POLL = 0.05
_CONFLICT_TRIES = 5


def new_call_id() -> str:
    """A fresh, unguessable id for one call."""
    return uuid.uuid4().hex


@dataclass
class Created:
    """An object a call wrote with its mark (maybe created, maybe not: the answer decides)."""

    kind: type[KubeResource]
    name: str
    namespace: str = ""
    #: False while the write is in flight, or when an attempt of it got no answer (it may
    #: still land, even after a retry was answered).
    answered: bool = False

    def describe(self) -> str:
        where = f" in namespace {self.namespace!r}" if self.namespace else ""
        return f"{self.kind.__name__} {self.name!r}{where}"


class RollbackIncomplete(Exception):
    """A multi-object action failed (`error`) and some of what it created could not be
    removed; `left` names each such object and why. Objects listed carry the call's mark
    (annotation ``flarekit.dev/apply-call``), so they can be found and removed by hand."""

    def __init__(self, error: BaseException, left: Sequence[str]) -> None:
        self.error = error
        self.left = tuple(left)
        lines = "\n".join(f"  - {item}" for item in self.left)
        super().__init__(
            f"{error}\nthe failed call could not remove everything it created:\n{lines}"
        )


def refused(error: BaseException) -> bool:
    """Whether a failed write was certainly not carried out: the server answered, and not
    with 504 (a server-side timeout may still complete the write)."""
    return isinstance(error, ApiError) and error.code is not None and error.code != 504


def mark_of(obj: KubeResource) -> str | None:
    """The mark of the call creating `obj`, None when no call is (any more)."""
    meta = metadata_of(obj)
    annotations = (meta.annotations if meta is not None else None) or {}
    return annotations.get(MARK)


def _remove(client: Client, item: Created, call: str, settle: float) -> str | None:
    """Delete `item` if it still carries `call`'s mark; None when done, else why not. A write
    with a lost answer is watched for `settle` seconds: it may land later, even after the
    object was deleted once (a retried attempt answered while the first one was in flight)."""
    namespace = item.namespace or None
    deadline = time.monotonic() + (0.0 if item.answered else settle)
    seen = False
    conflicts = 0
    while True:
        try:
            obj = client.get(item.kind, item.name, namespace=namespace)
        except NotFound:
            if time.monotonic() < deadline:
                time.sleep(_POLL)
                continue
            if item.answered or seen:
                return None
            return (
                f"{item.describe()}: its write got no answer and it had not appeared "
                f"{settle:g}s later; if it appears, it carries {MARK}={call}"
            )
        except ApiError as exc:
            return f"{item.describe()}: could not be read to decide ({exc})"
        if mark_of(obj) != call:
            return None  # applied since by someone else: theirs to keep
        seen = True
        meta = metadata_of(obj)
        try:
            client.delete(
                item.kind,
                item.name,
                namespace=namespace,
                uid=meta.uid if meta is not None else None,
                resource_version=meta.resource_version if meta is not None else None,
            )
        except NotFound:
            pass
        except Conflict:
            conflicts += 1
            if conflicts >= _CONFLICT_TRIES:
                return f"{item.describe()}: kept changing while being removed"
        except ApiError as exc:
            return f"{item.describe()}: could not be deleted ({exc})"


def undo(client: Client, created: Sequence[Created], call: str, settle: float) -> list[str]:
    """Remove, newest first, what `call` created and nobody has relied on since; the
    descriptions of what could not be removed. `settle` is how long a write whose answer was
    lost is waited for."""
    left = (_remove(client, item, call, settle) for item in reversed(created))
    return [why for why in left if why is not None]
