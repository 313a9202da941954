"""Create or update Kueue's admin objects on a cluster, in the version it serves.

Why: setting up queues is several objects that refer to each other (LocalQueue ->
ClusterQueue -> ResourceFlavors). `apply_all` checks every description, renders it for the
served Kueue version, makes sure every reference resolves (to an object given alongside or
one already on the cluster) before sending anything, applies them server-side in dependency
order (applying the same thing twice changes nothing), and if one fails, deletes the objects
this call created, so a failed setup leaves no half-made queue behind. Objects that existed
before are updated in place and are not rolled back, and neither are objects a concurrent
call applied too (`flarekit._rollback` says how that is known).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import flarekit.compat
from flarekit._json import JsonValue
from flarekit._objects import metadata_of
from flarekit._plan import Plan, change_of
from flarekit._rollback import (
    MARK,
    Created,
    Mark,
    RollbackIncomplete,
    live_mark,
    mark_of,
    new_mark,
    refused,
    release,
    request_bound,
    take_over,
    undo,
)
from flarekit._validation import ConfigError, Problem
from flarekit.client import ApiError, ApiUnavailable, Conflict, KueueVersion, NotFound, Operation
from flarekit.kueue._cluster_queue import ClusterQueueSpec, QuantityValue, Quota
from flarekit.kueue._flavor import ResourceFlavorSpec
from flarekit.kueue._local_queue import LocalQueueSpec
from flarekit.kueue._models import kueue_model
from flarekit.kueue._priority import WorkloadPriorityClassSpec
from flarekit.kueue._spec import KueueObjectSpec

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models import KubeResource
    from flarekit_models.core.v1 import Taint, Toleration

__all__ = [
    "AdminSpec",
    "apply_all",
    "apply_cluster_queue",
    "apply_local_queue",
    "apply_resource_flavor",
    "apply_workload_priority_class",
]

AdminSpec = ResourceFlavorSpec | ClusterQueueSpec | LocalQueueSpec | WorkloadPriorityClassSpec
_ORDER = (ResourceFlavorSpec, WorkloadPriorityClassSpec, ClusterQueueSpec, LocalQueueSpec)
Key = tuple[str, str, str]  # kind, namespace, name


def _key(spec: KueueObjectSpec) -> Key:
    return (spec.kind, str(getattr(spec, "namespace", "") or ""), spec.name)


def _exists(client: Client, version: KueueVersion, kind: str, name: str, namespace: str) -> bool:
    return _read(client, version, kind, name, namespace) is not None


def _read(
    client: Client, version: KueueVersion, kind: str, name: str, namespace: str
) -> KubeResource | None:
    model = kueue_model(version, kind)
    try:
        found: KubeResource = client.get(model, name, namespace=namespace or None)
    except NotFound:
        return None
    return found


def _settled(found: KubeResource | None) -> bool:
    """Whether the object is on the cluster and no call is still creating it (no live mark):
    only then is it updated as it is; otherwise this call takes it over as one it creates."""
    return found is not None and live_mark(found) is None


def _check_specs(specs: Sequence[object]) -> list[KueueObjectSpec]:
    """The specs, checked (what a caller passed may be anything) and in creation order."""
    problems: list[Problem] = []
    seen: set[Key] = set()
    checked: list[KueueObjectSpec] = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, _ORDER):
            problems.append(
                Problem(
                    f"specs[{i}]",
                    spec,
                    f"a {type(spec).__name__} is not a Kueue object description",
                    "ResourceFlavorSpec, ClusterQueueSpec, LocalQueueSpec or "
                    "WorkloadPriorityClassSpec",
                )
            )
            continue
        spec.validate().raise_if_problems()  # changed since construction?
        key = _key(spec)
        if key in seen:
            problems.append(
                Problem(f"specs[{i}]", spec.name, f"a second {spec.kind} of that name", "each once")
            )
        seen.add(key)
        checked.append(spec)
    if problems:
        raise ConfigError(problems, "Kueue objects")
    return sorted(checked, key=lambda s: next(i for i, t in enumerate(_ORDER) if isinstance(s, t)))


def _changed_cluster_queue(current: KubeResource | None, spec: LocalQueueSpec) -> str:
    """The ClusterQueue an existing LocalQueue (`current`, as read) points at when `spec`
    names another one ("" when it does not exist or names the same)."""
    if current is None:
        return ""
    queue = getattr(current, "spec", None)
    existing = str((queue.cluster_queue if queue is not None else None) or "")
    return existing if existing and existing != spec.cluster_queue else ""


def _missing_references(
    client: Client,
    version: KueueVersion,
    specs: list[KueueObjectSpec],
    found: Mapping[Key, KubeResource | None],
) -> list[Problem]:
    given = {_key(s) for s in specs}
    problems: list[Problem] = []
    for spec in specs:
        if isinstance(spec, LocalQueueSpec):
            # Kueue refuses the change (spec.clusterQueue is immutable): say so before writing.
            existing = _changed_cluster_queue(found.get(_key(spec)), spec)
            if existing:
                problems.append(
                    Problem(
                        f"LocalQueue {spec.name!r}: cluster_queue",
                        spec.cluster_queue,
                        f"the LocalQueue exists with cluster_queue {existing!r}, and Kueue "
                        "does not let a LocalQueue change its ClusterQueue",
                        f"{existing!r}, or delete the LocalQueue first",
                    )
                )
        wanted: list[tuple[str, str, str]] = []  # kind, name, field
        if isinstance(spec, ClusterQueueSpec):
            wanted = [("ResourceFlavor", f, f"flavors[{f!r}]") for f in spec.flavors]
        elif isinstance(spec, LocalQueueSpec):
            wanted = [("ClusterQueue", spec.cluster_queue, "cluster_queue")]
        for kind, name, field in wanted:
            if (kind, "", name) in given or _exists(client, version, kind, name, ""):
                continue
            problems.append(
                Problem(
                    f"{spec.kind} {spec.name!r}: {field}",
                    name,
                    f"no {kind} {name!r} on the cluster",
                    f"an existing {kind}, or one applied in the same call",
                )
            )
    return problems


@overload
def apply_all(
    client: Client,
    specs: Iterable[AdminSpec],
    *,
    force: bool = False,
    dry_run: Literal[False] = False,
) -> list[KubeResource]: ...


@overload
def apply_all(
    client: Client, specs: Iterable[AdminSpec], *, force: bool = False, dry_run: Literal[True]
) -> Plan: ...


def apply_all(
    client: Client, specs: Iterable[AdminSpec], *, force: bool = False, dry_run: bool = False
) -> list[KubeResource] | Plan:
    """Create or update every described object, in the Kueue version the cluster serves.
    `dry_run=True` makes every check, then sends each apply as a server-side dry run and
    returns the `Plan` of what the call would create or change (nothing is written, so
    nothing needs rolling back).

    Raises `ConfigError` (before any write) for invalid descriptions, dangling references
    and fields the cluster's Kueue release lacks (`flarekit.compat.FieldUnavailable`).
    On a failed write, removes what this call created (see `flarekit._rollback`: objects
    another call applied in the meantime are kept, a write whose answer was lost is waited
    for) and re-raises; `RollbackIncomplete` when something could not be removed. `force`
    takes over fields another field manager owns. Returns the objects as stored, in the
    order applied.
    """
    ordered = _check_specs(list(specs))
    version = client.facts.kueue_version()
    rendered = [
        (
            spec,
            flarekit.compat.prepare_write(
                client, spec.render(version), subject=f"{spec.kind} {spec.name!r}"
            ),
        )
        for spec in ordered
    ]
    # Each object read once: whether it exists (and whether a call is creating it) and, for
    # a LocalQueue, the ClusterQueue it points at.
    found = {
        _key(spec): _read(client, version, spec.kind, spec.name, _key(spec)[1]) for spec in ordered
    }
    problems = _missing_references(client, version, ordered, found)
    if problems:
        raise ConfigError(problems, "Kueue objects")
    if dry_run:
        return _dry_run(client, rendered, found, force)
    existing = {key for key, obj in found.items() if _settled(obj)}
    mark = new_mark(client)
    applied: list[KubeResource] = []
    created: list[Created] = []
    lost = client.unanswered_writes
    try:
        for spec, model in rendered:
            key = _key(spec)
            if key in existing:
                applied.append(client.apply(model, force=force))
                continue
            item = Created(type(model), spec.name, key[1])  # recorded before the request
            created.append(item)
            lost = client.unanswered_writes
            obj, ours = _write(client, model, found[key], mark, force)
            applied.append(obj)
            item.answered = client.unanswered_writes == lost
            if not ours:  # settled by another call meanwhile: theirs, not ours to remove
                created.remove(item)
                existing.add(key)
    except BaseException as exc:
        if created and not created[-1].answered and client.unanswered_writes == lost:
            created[-1].answered = refused(exc)
        left = undo(client, created, mark, settle=client.timeout)
        if left:
            raise RollbackIncomplete(exc, left) from exc
        raise
    stale = [obj for key, obj in found.items() if key in existing and obj is not None]
    return _confirm(client, rendered, applied, existing, stale, force)


def _dry_run(
    client: Client,
    rendered: list[tuple[KueueObjectSpec, KubeResource]],
    found: Mapping[Key, KubeResource | None],
    force: bool,
) -> Plan:
    """Each object's apply as a server-side dry run, in the order `apply_all` writes them
    (`found`: each object as read before)."""
    changes = []
    for spec, model in rendered:
        live = found[_key(spec)]
        result = client.apply(model, force=force, dry_run=True)
        changes.append(change_of(model, live, result, client.field_manager))
    return Plan(tuple(changes))


def _marked(model: KubeResource, mark: Mark) -> KubeResource:
    """`model` with this call's mark among its annotations (a copy)."""
    copy = model.model_copy(deep=True)
    meta = metadata_of(copy)
    if meta is not None:  # every rendered Kueue object has one
        meta.annotations = {**(meta.annotations or {}), MARK: mark.value}
    return copy


def _on_mark_only(error: Conflict) -> bool:
    """Whether a server-side apply conflict is over the mark alone (another field manager
    wrote it: a call of theirs created the object meanwhile)."""
    fields = [cause.field for cause in error.causes]
    return bool(fields) and all(field.endswith(MARK) for field in fields)


def _write(
    client: Client, model: KubeResource, found: KubeResource | None, mark: Mark, force: bool
) -> tuple[KubeResource, bool]:
    """Apply `model` as an object this call creates (`found`: as read before); the object as
    stored, and whether it carries this call's mark (False: another call settled it)."""
    for _ in range(5):
        if mark.time_left() < request_bound(client):
            raise ApiUnavailable(
                Operation("apply", type(model).__name__),
                None,
                "MarkExpiring",
                f"the call ran out of the time its {MARK} annotation holds ({mark.value})",
            )
        if found is None:
            try:  # created with the mark in the same request: never unmarked
                return client.apply(_marked(model, mark), force=force), True
            except Conflict as exc:
                if not _on_mark_only(exc):
                    raise
            found = _read_again(client, model)
            continue
        current = mark_of(found)
        if current is None or live_mark(found) is None:
            return client.apply(model, force=force), False
        if current == mark.value or take_over(client, found, current, mark) is not None:
            return client.apply(model, force=force), True
        found = _read_again(client, model)
    raise ApiUnavailable(
        Operation("apply", type(model).__name__),
        None,
        "MarkContended",
        f"other calls kept taking over the {MARK} annotation",
    )


def _read_again(client: Client, model: KubeResource) -> KubeResource | None:
    meta = metadata_of(model)
    name = str((meta.name if meta is not None else None) or "")
    namespace = (meta.namespace if meta is not None else None) or None
    try:
        found: KubeResource = client.get(type(model), name, namespace=namespace)
    except NotFound:
        return None
    return found


def _confirm(
    client: Client,
    rendered: list[tuple[KueueObjectSpec, KubeResource]],
    applied: list[KubeResource],
    existing: set[Key],
    stale: list[KubeResource],
    force: bool,
) -> list[KubeResource]:
    """Remove the mark of what this call created: the call succeeded, so its objects are no
    longer for a rollback to remove. Whatever mark an object carries by now goes (a call
    that took it over meanwhile must not delete what this one relies on); one that is gone
    (such a call failed and deleted it) is applied again. A failure here leaves a mark that
    is ignored once it ends, and is a warning, not an error. Marks of calls that ended
    without removing them are cleaned from the objects this call updated."""
    out = list(applied)
    for index, (spec, model) in enumerate(rendered):
        if _key(spec) in existing:
            continue
        try:
            after = release(client, applied[index])
            if after is None:  # no mark any more, or gone
                after = _read_again(client, model) or client.apply(model, force=force)
            out[index] = after
        except ApiError as exc:
            warnings.warn(
                f"{spec.kind} {spec.name!r} was applied but still carries the annotation "
                f"{MARK} ({exc}); it is ignored after {_mark_ends(applied[index])}",
                RuntimeWarning,
                stacklevel=3,
            )
    for obj in stale:
        current = mark_of(obj)
        if current is not None:
            with contextlib.suppress(ApiError):
                release(client, obj, current)
    return out


def _mark_ends(obj: KubeResource) -> str:
    text = mark_of(obj)
    parsed = Mark.parse(text) if text is not None else None
    return parsed.ends.isoformat() if parsed is not None else "now"


def apply_resource_flavor(
    client: Client,
    name: str,
    *,
    node_labels: Mapping[str, str] | None = None,
    node_taints: list[Taint | Mapping[str, JsonValue]] | None = None,
    tolerations: list[Toleration | Mapping[str, JsonValue]] | None = None,
    force: bool = False,
) -> KubeResource:
    """Create or update ResourceFlavor `name` (see `ResourceFlavorSpec`)."""
    spec = ResourceFlavorSpec(name, dict(node_labels or {}), node_taints or [], tolerations or [])
    return apply_all(client, [spec], force=force)[0]


def apply_cluster_queue(
    client: Client,
    name: str,
    flavors: Mapping[str, Mapping[str, QuantityValue | Quota]],
    *,
    force: bool = False,
    **options: Any,
) -> KubeResource:
    """Create or update ClusterQueue `name` with quota `flavors`; `options` are the other
    `ClusterQueueSpec` fields (cohort, namespace_selector, preemption settings, ...)."""
    return apply_all(client, [ClusterQueueSpec(name, flavors, **options)], force=force)[0]


def apply_local_queue(
    client: Client,
    name: str,
    cluster_queue: str,
    *,
    namespace: str | None = None,
    default: bool = False,
    force: bool = False,
) -> KubeResource:
    """Create or update LocalQueue `name` in `namespace` (the client's by default)."""
    spec = LocalQueueSpec(name, namespace or client.namespace, cluster_queue, default)
    return apply_all(client, [spec], force=force)[0]


def apply_workload_priority_class(
    client: Client,
    name: str,
    value: int,
    *,
    description: str | None = None,
    force: bool = False,
) -> KubeResource:
    """Create or update WorkloadPriorityClass `name` with priority `value`."""
    spec = WorkloadPriorityClassSpec(name, value, description)
    return apply_all(client, [spec], force=force)[0]
