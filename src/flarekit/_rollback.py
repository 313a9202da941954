"""Undoing the creates of a multi-object action that failed halfway, without touching what is
not ours, and without leaving anything that stands in anyone's way.

Why: an action that writes several objects (Kueue's `apply_all`) must leave nothing behind
when it fails, and must never delete what someone else made or still uses. Three things make
that hard: an answer that never arrives (the write may land after the client gave up), a
second call applying the same objects at the same time, and a delete that itself fails.

So every object a call creates carries this call's mark (`MARK`) in an annotation set in the
same server-side apply that creates it: "this call made it and nobody has relied on it since".
The mark names the call (a random id) and the time the call ends at the latest (`Mark`): a
call never writes or deletes after it, and once it has passed every reader ignores the mark,
whatever happened to the call (it died, its rollback could not delete, a slow write landed
late). A call that succeeds removes the mark of each object it created; a call that fails
deletes an object only while it still carries its own mark, with the uid and resourceVersion
it read as preconditions (a change in between makes the delete fail with `Conflict`, and the
object is looked at again), and when it cannot delete, it removes its mark instead.

The mark never locks an object. Apart from that first apply, it is written and removed only
by JSON patches conditional on its current value (`take_over`, `release`), never by server-side
apply: so no field manager's later apply conflicts over it, and a mark left by another field
manager is taken over, not fought over. An object found carrying another call's live mark is
still being created by that call: this call takes the mark over and, when it succeeds,
removes it; if this call fails and deletes the object, the other call's confirmation creates
it again should that call succeed. A write whose answer was lost is re-read until it appears
or a settling time has passed. What could not be undone is named in `RollbackIncomplete`.
"""

from __future__ import annotations

import datetime
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flarekit._objects import metadata_of
from flarekit.client import ApiError, Conflict, Invalid, NotFound

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models import KubeResource

__all__ = [
    "MARK",
    "MARK_MANAGER",
    "Created",
    "Mark",
    "RollbackIncomplete",
    "live_mark",
    "mark_of",
    "new_mark",
    "refused",
    "release",
    "take_over",
    "undo",
]

#: The annotation a multi-object action puts on the objects it creates until it succeeds.
MARK = "flarekit.dev/apply-call"
#: The field manager of the JSON patches that take a mark over or remove it.
MARK_MANAGER = "flarekit-apply-call"
#: The least time a call's mark holds; a client whose requests may take longer gets more.
LEASE = 600.0
#: How far apart the clocks of two clients may be: a mark is ignored this long after it ends.
CLOCK_SKEW = 60.0
_POLL = 0.05
_CONFLICT_TRIES = 5
_PATH = "/metadata/annotations/" + MARK.replace("~", "~0").replace("/", "~1")


def request_bound(client: Client) -> float:
    """The longest one request of `client` may take, its retries and their waits included."""
    retry = client.retry
    return retry.attempts * (client.timeout + max(retry.max_backoff, retry.max_retry_after))


@dataclass(frozen=True)
class Mark:
    """One call's mark: its id and the time (UTC) it ends at the latest. `deadline` is that
    time on this process's monotonic clock (None for a mark read from an object)."""

    call: str
    ends: datetime.datetime
    deadline: float | None = None

    @property
    def value(self) -> str:
        return f"{self.call} until {self.ends.strftime('%Y-%m-%dT%H:%M:%SZ')}"

    @classmethod
    def parse(cls, text: str) -> Mark | None:
        call, sep, when = text.partition(" until ")
        if not sep or not call:
            return None
        try:
            ends = datetime.datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ")
        except ValueError:
            return None
        return cls(call, ends.replace(tzinfo=datetime.UTC))

    def live(self, now: datetime.datetime | None = None) -> bool:
        """Whether the call may still be under way (its end, plus clock skew, is ahead)."""
        now = now or datetime.datetime.now(datetime.UTC)
        return now < self.ends + datetime.timedelta(seconds=CLOCK_SKEW)

    def time_left(self) -> float:
        assert self.deadline is not None, "only a call's own mark has a deadline"
        return self.deadline - time.monotonic()


def new_mark(client: Client) -> Mark:
    """A fresh mark for a call made with `client`: an unguessable id, and an end far enough
    ahead for several of the client's slowest requests (`LEASE` at least)."""
    lease = max(LEASE, 4 * request_bound(client))
    ends = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=lease)
    ends = ends.replace(microsecond=0)
    return Mark(uuid.uuid4().hex, ends, time.monotonic() + lease - 1.0)


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
    removed; `left` names each such object and why."""

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
    """The mark annotation's text on `obj`, live or not; None without one."""
    meta = metadata_of(obj)
    annotations = (meta.annotations if meta is not None else None) or {}
    return annotations.get(MARK)


def live_mark(obj: KubeResource) -> Mark | None:
    """The mark of the call creating `obj`; None when no call is (any more): no mark, one
    whose call has ended, or one written before marks said when they end."""
    text = mark_of(obj)
    mark = Mark.parse(text) if text is not None else None
    return mark if mark is not None and mark.live() else None


def _patch(
    client: Client, obj: KubeResource, operations: list[dict[str, str]]
) -> KubeResource | None:
    """Apply a JSON patch to `obj` (by kind, name, namespace); None when it is gone or a
    `test` operation failed (the mark changed)."""
    meta = metadata_of(obj)
    name = str((meta.name if meta is not None else None) or "")
    namespace = (meta.namespace if meta is not None else None) or None
    try:
        changed: KubeResource = client.patch(
            type(obj),
            name,
            operations,
            namespace=namespace,
            patch_type="json",
            field_manager=MARK_MANAGER,
        )
    except (NotFound, Invalid, Conflict):
        return None
    return changed


def take_over(client: Client, obj: KubeResource, current: str, mark: Mark) -> KubeResource | None:
    """Replace the mark `current` on `obj` by `mark`; the object after, or None when it is
    gone or carries another mark by now."""
    return _patch(
        client,
        obj,
        [
            {"op": "test", "path": _PATH, "value": current},
            {"op": "replace", "path": _PATH, "value": mark.value},
        ],
    )


def release(client: Client, obj: KubeResource, current: str | None = None) -> KubeResource | None:
    """Remove the mark from `obj` (only if it is still `current`, when given); the object
    after, or None when it is gone, has no mark, or has another by now."""
    test = [{"op": "test", "path": _PATH, "value": current}] if current is not None else []
    return _patch(client, obj, [*test, {"op": "remove", "path": _PATH}])


def _remove(client: Client, item: Created, mark: Mark, settle: float) -> str | None:
    """Delete `item` if it still carries `mark`; None when done, else why not. A write
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
                f"{settle:g}s later; if it appears, its {MARK} annotation is ignored after "
                f"{mark.ends.isoformat()}"
            )
        except ApiError as exc:
            return f"{item.describe()}: could not be read to decide ({exc})"
        if mark_of(obj) != mark.value:
            return None  # applied since by someone else: theirs to keep
        seen = True
        if mark.time_left() < request_bound(client):
            return f"{item.describe()}: kept, the call ran out of time to remove it"
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
            return f"{item.describe()}: could not be deleted ({exc}); {_unmark(client, obj, mark)}"


def _unmark(client: Client, obj: KubeResource, mark: Mark) -> str:
    """Remove the mark of an object that cannot be deleted, so that nothing takes it for one
    still being created; what became of the mark."""
    try:
        if release(client, obj, mark.value) is not None:
            return f"its {MARK} annotation was removed"
    except ApiError:
        pass
    return f"its {MARK} annotation is ignored after {mark.ends.isoformat()}"


def undo(client: Client, created: Sequence[Created], mark: Mark, settle: float) -> list[str]:
    """Remove, newest first, what the call of `mark` created and nobody has relied on since;
    the descriptions of what could not be removed. `settle` is how long a write whose answer
    was lost is waited for."""
    left = (_remove(client, item, mark, settle) for item in reversed(created))
    return [why for why in left if why is not None]
