"""What every simulated operator shares: a schedule clock, level-triggered reconciling, and
status written only in the shape the served CRD declares.

Simulated controllers stand in for KubeRay, Kueue, Trainer and AppWrapper in tests, in the
spirit of KWOK: no pods run, but the objects a client watches move through the states the
real operator gives them, on a schedule the test chooses. They are level-triggered like real
operators: on every tick each controller looks at the current objects and moves the ones that
are due. An object is acted on only from the tick after its first event was delivered, so
every controller (Kueue's suspension in particular, which a real cluster applies in an
admission webhook) has seen a new object before any other controller moves it, whatever the
order in which controllers were registered.

Schedules read a clock (`time.monotonic` by default); `ManualClock` lets a test move time by
hand so that "after 30 seconds" happens on the next tick without waiting.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import ApiError, Event

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster, ResourceType

JSON = dict[str, Any]
Clock = Callable[[], float]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
#: Status fields that change on every write; a change to them alone is not worth a write.
VOLATILE = frozenset({"lastUpdateTime"})


class ManualClock:
    """A clock for schedules that moves only when the test calls `advance`."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"seconds must not be negative, got {seconds}")
        with self._lock:
            self._now += seconds


def timestamp() -> str:
    """The current wall-clock time as Kubernetes writes it (RFC 3339, seconds, UTC)."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def suffix(*parts: str, length: int = 5) -> str:
    """A stable stand-in for the random name suffixes operators generate."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    raw = hashlib.sha256("/".join(parts).encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in raw[:length])


def delete_quietly(cluster: FakeCluster, resource: str, obj: Mapping[str, Any]) -> None:
    """Delete an object that may already be gone (as a garbage collector would)."""
    meta = obj["metadata"]
    try:
        cluster.delete(resource, meta["name"], meta.get("namespace"))
    except ApiError as exc:
        if exc.code != 404:
            raise


def check_delay(name: str, value: float | None) -> None:
    """Schedules are seconds from a starting point; negative ones are a test's mistake."""
    if value is not None and value < 0:
        raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")


def is_suspended(obj: Mapping[str, Any]) -> bool:
    return bool((obj.get("spec") or {}).get("suspend"))


def owner_reference(obj: Mapping[str, Any], controller: bool = True) -> JSON:
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def controller_owner(obj: Mapping[str, Any]) -> JSON | None:
    """The ownerReference marked `controller: true`, if any."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), None)


def set_condition(
    conditions: list[JSON],
    type_: str,
    status: bool,
    reason: str,
    message: str = "",
    generation: int | None = None,
) -> list[JSON]:
    """A copy of `conditions` with one condition set as `meta.SetStatusCondition` does it:
    `lastTransitionTime` changes only when the status does."""
    value = "True" if status else "False"
    out = [dict(c) for c in conditions]
    found = next((c for c in out if c.get("type") == type_), None)
    if found is None:
        found = {"type": type_, "lastTransitionTime": timestamp()}
        out.append(found)
    elif found.get("status") != value:
        found["lastTransitionTime"] = timestamp()
    found.update(status=value, reason=reason, message=message)
    if generation is not None:
        found["observedGeneration"] = generation
    return out


def condition(obj: Mapping[str, Any], type_: str) -> JSON | None:
    conditions = (obj.get("status") or {}).get("conditions") or []
    found: JSON | None = next((c for c in conditions if c.get("type") == type_), None)
    return found


def fit(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """`value` without the object fields `schema` does not declare.

    Releases differ in what their status holds (KubeRay 1.1 has no `conditions`, Kueue's
    v1beta1 and v1beta2 differ); writing only declared fields keeps every write valid for the
    release being served instead of relying on pruning.
    """
    if schema is None:
        return value
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return value
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if props is None and isinstance(extra, dict):
            return {k: fit(v, extra) for k, v in value.items()}
        if props is None:
            return value if extra else {}
        return {k: fit(v, props[k]) for k, v in value.items() if k in props}
    if isinstance(value, list):
        return [fit(v, schema.get("items")) for v in value]
    return value


def subschema(rt: ResourceType, *path: str) -> JSON | None:
    """The storage version's schema at `path` (property names), or None if undeclared."""
    version = rt.version(rt.storage_version)
    node: JSON | None = version.schema if version is not None else None
    for name in path:
        if node is None:
            return None
        node = node.get("items") if name == "[]" else (node.get("properties") or {}).get(name)
    return node


def declares(rt: ResourceType, *path: str) -> bool:
    return subschema(rt, *path) is not None


@contextlib.contextmanager
def _moved_on() -> Iterator[None]:
    """Ignore NotFound and Conflict: events reach controllers after the fact, so the object
    may be gone or changed since; like a real operator, act again on the next event or tick.
    Creating into a namespace being deleted is refused (403) until it is gone, and the real
    controllers log that and requeue: so is it here."""
    try:
        yield
    except ApiError as exc:
        if exc.code not in (404, 409) and not namespace_terminating(exc):
            raise


def namespace_terminating(exc: ApiError) -> bool:
    """Whether `exc` refuses a create because its namespace is being deleted."""
    causes = (exc.details or {}).get("causes") or []
    return exc.code == 403 and any(c.get("reason") == "NamespaceTerminating" for c in causes)


class SimController:
    """Base of the simulated operators: tracks one resource and reconciles it on ticks.

    Subclasses set `resource` and implement `reconcile(cluster, obj, since)`, where `since` is
    how long ago (on the schedule clock) the object was first seen. `ticks` counts completed
    ticks; `wait_ticks(n)` lets a test know the controller has looked at everything at least
    `n` more times, which is how a test checks that something does *not* happen.
    """

    resource = ""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or time.monotonic
        self._seen: dict[str, float] = {}
        self._rt: ResourceType | None = None
        self._ticks = 0
        self._tick_done = threading.Condition()

    # -- the Controller protocol ----------------------------------------------------------------

    def on_event(self, cluster: FakeCluster, event: Event) -> None:
        rt = self.rt(cluster)
        if event.key[0] != rt.group or event.key[1] != rt.plural:
            with _moved_on():
                self.on_other_event(cluster, event)
            return
        uid = str(event.obj.get("metadata", {}).get("uid", ""))
        if event.type == "DELETED":
            self._seen.pop(uid, None)
            with _moved_on():
                self.on_deleted(cluster, event.obj)
        elif uid not in self._seen:
            self._seen[uid] = self.clock()

    def on_tick(self, cluster: FakeCluster) -> None:
        try:
            for obj in cluster.objects(self.name(cluster)):
                uid = str(obj["metadata"]["uid"])
                if uid not in self._seen:
                    self._seen[uid] = self.clock()  # seeded before this controller ran
                    continue
                with _moved_on():
                    if obj["metadata"].get("deletionTimestamp"):
                        self.finalize(cluster, obj)
                    else:
                        self.reconcile(cluster, obj, self.clock() - self._seen[uid])
            with _moved_on():
                self.after_tick(cluster)
        finally:
            with self._tick_done:
                self._ticks += 1
                self._tick_done.notify_all()

    # -- for subclasses -------------------------------------------------------------------------

    def rt(self, cluster: FakeCluster) -> ResourceType:
        if self._rt is None:
            self._rt = cluster.resource(self.resource)
        return self._rt

    def name(self, cluster: FakeCluster) -> str:
        rt = self.rt(cluster)
        return f"{rt.plural}.{rt.group}"

    def restart_schedule(self, obj: Mapping[str, Any]) -> None:
        """Count `since` from now (for example when a suspended object is resumed)."""
        self._seen[str(obj["metadata"]["uid"])] = self.clock()

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        raise NotImplementedError

    def finalize(self, cluster: FakeCluster, obj: JSON) -> None:
        """An object of this resource is being deleted (finalizers hold it)."""

    def on_deleted(self, cluster: FakeCluster, obj: JSON) -> None:
        """An object of this resource is gone."""

    def on_other_event(self, cluster: FakeCluster, event: Event) -> None:
        """A change to some other resource."""

    def after_tick(self, cluster: FakeCluster) -> None:
        """Runs once per tick after every object was reconciled (pods write log lines here)."""

    def write_status(self, cluster: FakeCluster, obj: Mapping[str, Any], status: JSON) -> JSON:
        """Merge `status` (fitted to the served schema) into the object's status if it changes
        anything; `None` values remove fields."""
        rt = self.rt(cluster)
        fitted = fit_patch(status, subschema(rt, "status"))
        current = obj.get("status") or {}
        if all(current.get(k) == v for k, v in fitted.items() if k not in VOLATILE):
            return dict(obj)
        meta = obj["metadata"]
        return cluster.set_status(self.name(cluster), meta["name"], fitted, meta.get("namespace"))

    # -- for tests ------------------------------------------------------------------------------

    @property
    def ticks(self) -> int:
        with self._tick_done:
            return self._ticks

    def wait_ticks(self, n: int = 2, timeout: float = 5.0) -> None:
        """Block until this controller has completed `n` more ticks."""
        with self._tick_done:
            target = self._ticks + n
            if not self._tick_done.wait_for(lambda: self._ticks >= target, timeout):
                raise TimeoutError(
                    f"{type(self).__name__} completed {self._ticks - target + n} of {n} ticks "
                    f"in {timeout}s; is it registered with a running FakeCluster?"
                )


def fit_patch(patch: JSON, schema: Mapping[str, Any] | None) -> JSON:
    """Like `fit`, keeping `None` (delete) values of declared fields."""
    fitted = fit({k: v for k, v in patch.items() if v is not None}, schema)
    props = (schema or {}).get("properties") or {}
    for k, v in patch.items():
        if v is None and k in props:
            fitted[k] = None
    out: JSON = fitted
    return out
