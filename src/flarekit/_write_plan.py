"""Plan, then write: what a facade action sends, decided before the first write.

Why: an action that reads, decides and writes by turns (ask for a version, read a queue, read
the object, convert, write, read again) sends more requests than it needs, and a failure
halfway is hard to undo. So each action builds a `WritePlan` first: the typed objects it will
write, in order, and the preconditions it needs from the server (a queue that must exist, an
object that must not belong to someone else). Facts about the server itself (served versions,
what a release's CRD declares) come from the client's facts, asked once per client while the
plan is built. `execute` is the one executor: it checks the preconditions, then applies the
objects server-side (or creates them, for objects such as jobs that must be new), each in one
request, and when one fails deletes what the plan created and re-raises, so nothing is left
behind and nothing that was not the plan's is removed: an object counts as created only when
its write said so (server-side apply answers 201 Created when it creates).

Which objects a plan created is learnt from the writes themselves, so nothing is read before
writing; a rollback deletes each with its uid as a precondition (an object deleted and made
again by someone else meanwhile is not theirs to lose). Kueue's `apply_all`, whose calls may
overlap on the same objects, marks what it creates and reads before it writes instead (see
`flarekit._rollback`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import flarekit.client
from flarekit._objects import metadata_of, name_of
from flarekit._plan import Plan, change_of
from flarekit._rollback import refused

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models import KubeResource

__all__ = ["Precondition", "WritePlan", "dry_run", "execute"]

#: A check of what the server must show before anything is written: it reads what it needs
#: through the client and raises the error that says what is wrong.
Precondition = Callable[["Client"], None]


@dataclass(frozen=True)
class WritePlan:
    """The objects an action writes, in order, and the preconditions of writing them.

    `force` takes over fields another field manager owns."""

    subject: str
    objects: Sequence[KubeResource]
    preconditions: Sequence[Precondition] = ()
    force: bool = False
    #: Create the objects (POST, strict field validation: an unknown field is refused, not
    #: dropped) instead of applying them: for objects that must not exist yet, such as jobs.
    create: bool = False
    #: Checks of each stored object right after its write (an admission webhook may have
    #: changed it); raising undoes the plan.
    after_write: Callable[[KubeResource, bool], None] | None = field(default=None, compare=False)


def execute(client: Client, plan: WritePlan) -> list[KubeResource]:
    """Check `plan`'s preconditions, then write its objects in order; returns them as
    stored. A failure of a write (or of `after_write`) deletes what the plan created,
    newest first, and re-raises the failure; what could not be deleted, and a write whose
    answer was lost (it may have created its object), is named in notes on it."""
    for precondition in plan.preconditions:
        precondition(client)
    created: list[KubeResource] = []
    stored: list[KubeResource] = []
    for model in plan.objects:
        lost = client.unanswered_writes
        try:
            if plan.create:
                obj, was_created = client.create(model, field_validation="Strict"), True
            else:
                obj, was_created = client.apply_tracked(model, force=plan.force)
        except BaseException as exc:
            if not refused(exc) and client.unanswered_writes != lost:
                exc.add_note(
                    f"the write of {_describe(model)} got no answer: it may have been "
                    "carried out; look for it, and delete it if it is not wanted"
                )
            _undo(client, created, exc)
            raise
        if was_created:
            created.append(obj)
        try:
            if plan.after_write is not None:
                plan.after_write(obj, not was_created)
        except BaseException as exc:
            _undo(client, created, exc)
            raise
        stored.append(obj)
    return stored


def _undo(client: Client, created: list[KubeResource], error: BaseException) -> None:
    """Delete, newest first, what the plan created (the very objects: their uid is a
    precondition of the delete); what could not be deleted is a note on `error`."""
    for obj in reversed(created):
        meta = metadata_of(obj)
        try:
            client.delete(
                type(obj),
                name_of(obj),
                namespace=_namespace(obj) or None,
                uid=meta.uid if meta is not None else None,
            )
        except flarekit.client.NotFound:
            pass
        except flarekit.client.ApiError as exc:
            error.add_note(
                f"could not delete {type(obj).__name__} {_namespace(obj)}/{name_of(obj)} created "
                f"by this call ({exc}); delete it by hand"
            )


def _describe(model: KubeResource) -> str:
    return f"{type(model).__name__} {_namespace(model)}/{name_of(model)}".replace(" /", " ")


def _namespace(model: KubeResource) -> str:
    meta = metadata_of(model)
    return str((meta.namespace if meta is not None else None) or "")


def dry_run(client: Client, plan: WritePlan) -> Plan:
    """What `execute` would change, written nowhere: the preconditions checked, each object
    sent as a server-side dry run and compared with the object as stored (`flarekit._plan`)."""
    for precondition in plan.preconditions:
        precondition(client)
    changes = []
    for model in plan.objects:
        try:
            stored: KubeResource | None = client.get(
                type(model), name_of(model), namespace=_namespace(model) or None
            )
        except flarekit.client.NotFound:
            stored = None
        result = client.apply(model, force=plan.force, dry_run=True)
        changes.append(change_of(model, stored, result, client.field_manager))
    return Plan(tuple(changes))
