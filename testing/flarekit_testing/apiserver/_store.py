"""Object storage with one global resourceVersion counter, a bounded event history, and watchers.

This plays the part of etcd plus the apiserver's watch cache: every write takes the next
resourceVersion, is remembered in a history of bounded length (what is older is "compacted"),
and is fanned out to open watches. Lists at an older resourceVersion (paginated lists) are
served by rolling the history back, so a continue token sees a consistent snapshot until its
version is compacted, as on a real server.

All reads and writes happen under one re-entrant lock; request handlers take it for the whole
read-modify-write so that optimistic concurrency is decided atomically.

Stored objects are never changed in place: a write stores a new copy. So reads that only
present objects (lists, watch events) may hand out the stored objects themselves and copy
just what they send; `get` returns a copy, for callers that modify what they read. Objects
are indexed by type, and each type's keys are kept sorted as etcd lists them, so a page of a
list costs what the page holds, not what the store holds.
"""

from __future__ import annotations

import bisect
import json
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flarekit_testing.apiserver._errors import ApiError
from flarekit_testing.apiserver._json import copy_json

JSON = dict[str, Any]
Key = tuple[str, str, str, str]  # group, plural, namespace ("" when cluster-scoped), name
Listing = list[tuple[str, JSON]]  # (storage key, stored object), in storage key order


#: etcd's limit on one request (`--max-request-bytes`, 1.5 MiB by default): a write whose
#: object, with its key, is larger fails with `etcdserver: request is too large`.
ETCD_MAX_REQUEST_BYTES = 1536 * 1024
#: kube-apiserver's etcd client sends messages of at most 2 MiB (gRPC's limit it sets).
ETCD_MAX_SEND_BYTES = 2 * 1024 * 1024
#: What an etcd write request adds to the object and its key (measured: kube-apiserver v1.36
#: with etcd v3.6 refuses an object this much below the limit).
_ETCD_OVERHEAD = 64


def _check_size(key: Key, obj: JSON) -> None:
    """Refuse an object etcd would not store, as kube-apiserver words it (a 500 Status with
    the storage's message and no reason)."""
    etcd_key = "/registry/" + "/".join(part for part in key if part)
    size = len(json.dumps(obj, separators=(",", ":"))) + len(etcd_key) + _ETCD_OVERHEAD
    if size > ETCD_MAX_SEND_BYTES:
        message = (
            "rpc error: code = ResourceExhausted desc = trying to send message larger than max "
            f"({size} vs. {ETCD_MAX_SEND_BYTES})"
        )
        raise ApiError(500, "", message)
    if size > ETCD_MAX_REQUEST_BYTES:
        raise ApiError(500, "", "etcdserver: request is too large")


def storage_key(key: Key) -> str:
    """The object's place in a list: `namespace/name` (or `name`), as in etcd's key order."""
    return f"{key[2]}/{key[3]}" if key[2] else key[3]


def _in_namespace(listing: Listing, namespace: str | None) -> Listing:
    """The contiguous run of a sorted listing that lies in one namespace."""
    if namespace is None:
        return listing
    low = bisect.bisect_left(listing, (f"{namespace}/",))
    high = bisect.bisect_left(listing, (f"{namespace}0",))  # "0" sorts right after "/"
    return listing[low:high]


@dataclass(frozen=True)
class Event:
    """One committed change. For DELETED, `obj` is the last state stamped with the delete's RV."""

    type: str
    rv: int
    key: Key
    obj: JSON
    prev: JSON | None


class TooOld(Exception):
    """The requested resourceVersion is older than the kept history."""

    def __init__(self, requested: int, compacted: int) -> None:
        super().__init__(f"too old resource version: {requested} ({compacted})")
        self.requested = requested
        self.compacted = compacted


Matcher = Callable[[JSON], bool]

BOOKMARK = "BOOKMARK"
#: The bookmark that ends a watch's initial events (annotated `k8s.io/initial-events-end`).
INITIAL_EVENTS_END = "INITIAL_EVENTS_END"
CLOSED = "CLOSED"


class Watcher:
    """One open watch: a queue of (type, object) pairs already filtered for this watch.

    Selector transitions follow the watch cache: an object that stops matching is sent as
    DELETED (its previous state, new resourceVersion), one that starts matching as ADDED.
    """

    def __init__(self, group: str, plural: str, namespace: str | None, matcher: Matcher) -> None:
        self.group = group
        self.plural = plural
        self.namespace = namespace
        self.matcher = matcher
        self.queue: queue.Queue[tuple[str, JSON | int | None]] = queue.Queue()
        self.last_rv = 0
        #: The newest resourceVersion of the watched resource type, any namespace or selector
        #: (what the watch cache's own resourceVersion follows).
        self.type_rv = 0

    def _in_scope(self, key: Key) -> bool:
        return (
            key[0] == self.group
            and key[1] == self.plural
            and (self.namespace is None or key[2] == self.namespace)
        )

    def offer(self, event: Event) -> None:
        if event.key[:2] == (self.group, self.plural):
            self.type_rv = event.rv
        if not self._in_scope(event.key):
            return
        self.last_rv = event.rv
        now = event.type != "DELETED" and self.matcher(event.obj)
        before = event.prev is not None and self.matcher(event.prev)
        if event.type == "DELETED":
            if self.matcher(event.obj):
                self.queue.put(("DELETED", event.obj))
        elif now and before:
            self.queue.put(("MODIFIED", event.obj))
        elif now:
            self.queue.put(("ADDED", event.obj))
        elif before and event.prev is not None:
            gone = copy_json(event.prev)
            gone.setdefault("metadata", {})["resourceVersion"] = str(event.rv)
            self.queue.put(("DELETED", gone))

    def close(self) -> None:
        self.queue.put((CLOSED, None))


class Store:
    """The objects of every resource type, their history, and the open watches."""

    def __init__(self, history: int = 1000) -> None:
        if history < 1:
            raise ValueError(f"history must be at least 1, got {history}")
        self.lock = threading.RLock()
        self._rv = 0
        self._objects: dict[Key, JSON] = {}
        self._types: dict[tuple[str, str], dict[Key, JSON]] = {}
        self._sorted: dict[tuple[str, str], Listing] = {}
        self._history: deque[Event] = deque()
        self._max_history = history
        self._compacted = 0
        self._watch_from = 0
        self._watchers: set[Watcher] = set()
        self.on_commit: list[Callable[[Event], None]] = []
        #: the operators' admission webhooks every write passes (see `_admission`)
        self.webhooks: list[Any] = []

    # -- reads ------------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        return self._rv

    @property
    def compacted(self) -> int:
        """The newest resourceVersion whose history is gone; older versions answer 410."""
        return self._compacted

    def get(self, key: Key) -> JSON | None:
        """A copy of the stored object (callers may change it)."""
        with self.lock:
            obj = self._objects.get(key)
            return copy_json(obj) if obj is not None else None

    def peek(self, key: Key) -> JSON | None:
        """The stored object itself, to present (copy) and never change."""
        with self.lock:
            return self._objects.get(key)

    def listing(self, group: str, plural: str, namespace: str | None) -> Listing:
        """(storage key, object) of one type now, in key order; the objects are the stored
        ones: present (copy) them, never change them."""
        with self.lock:
            cached = self._sorted.get((group, plural))
            if cached is None:
                found = self._types.get((group, plural), {})
                cached = sorted((storage_key(k), o) for k, o in found.items())
                self._sorted[(group, plural)] = cached
            return _in_namespace(cached, namespace)

    def listing_at(self, rv: int, group: str, plural: str, namespace: str | None) -> Listing:
        """The listing as it was at resourceVersion `rv`, rebuilt by undoing newer history."""
        with self.lock:
            if rv < self._compacted:
                raise TooOld(rv, self._compacted)
            if rv >= self._rv:
                return self.listing(group, plural, namespace)
            state = dict(self._types.get((group, plural), {}))
            for event in reversed(self._history):
                if event.rv <= rv:
                    break
                if event.key[0] != group or event.key[1] != plural:
                    continue
                if event.prev is None:
                    state.pop(event.key, None)
                else:
                    state[event.key] = event.prev
            return _in_namespace(sorted((storage_key(k), o) for k, o in state.items()), namespace)

    def items(self, group: str, plural: str, namespace: str | None) -> list[JSON]:
        """Current objects of one type (one namespace, or all when None), in key order; the
        stored objects themselves: do not change them."""
        return [o for _, o in self.listing(group, plural, namespace)]

    def keys_in_namespace(self, namespace: str) -> list[Key]:
        """Keys of every namespaced object living in `namespace`."""
        with self.lock:
            return sorted(k for k in self._objects if k[2] == namespace)

    # -- writes -----------------------------------------------------------------------------

    def commit(self, key: Key, obj: JSON | None, last: JSON | None = None) -> JSON:
        """Store a copy of `obj` under `key` with the next resourceVersion; returns the stored
        object (present it, never change it).

        `obj=None` deletes; the DELETED event then carries `last` (default: the stored state).
        """
        with self.lock:
            prev = self._objects.get(key)
            if obj is None and prev is None:
                raise KeyError(key)
            if obj is not None:
                _check_size(key, obj)
            self._rv += 1
            bucket = self._types.setdefault(key[:2], {})
            if obj is None:
                assert prev is not None
                final = copy_json(last if last is not None else prev)
                final.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
                del self._objects[key]
                del bucket[key]
                event = Event("DELETED", self._rv, key, final, prev)
            else:
                final = copy_json(obj)
                final.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
                self._objects[key] = final
                bucket[key] = final
                event = Event("ADDED" if prev is None else "MODIFIED", self._rv, key, final, prev)
            self._sorted.pop(key[:2], None)
            self._history.append(event)
            while len(self._history) > self._max_history:
                self._compacted = self._history.popleft().rv
            for watcher in list(self._watchers):
                watcher.offer(event)
            for listener in list(self.on_commit):
                listener(event)
            return final

    def compact(self) -> None:
        """Forget all history, as etcd compaction does (old RVs then answer 410 Expired)."""
        with self.lock:
            self._history.clear()
            self._compacted = self._rv

    # -- watches ----------------------------------------------------------------------------

    def watch(
        self,
        group: str,
        plural: str,
        namespace: str | None,
        since: int | None,
        matcher: Matcher,
        initial_events_end: bool = False,
    ) -> Watcher:
        """Open a watch; `since=None` starts with synthetic ADDED events for the current state
        (then, with `initial_events_end`, the bookmark that says they are all there)."""
        with self.lock:
            watcher = Watcher(group, plural, namespace, matcher)
            if since is None:
                for _, obj in self.listing(group, plural, namespace):
                    if matcher(obj):
                        watcher.queue.put(("ADDED", obj))
                if initial_events_end:
                    watcher.queue.put((INITIAL_EVENTS_END, self._rv))
            else:
                oldest = max(self._compacted, self._watch_from)
                if since < oldest:
                    raise TooOld(since, oldest)
                for event in self._history:
                    if event.rv > since:
                        watcher.offer(event)
            watcher.last_rv = watcher.type_rv = self._rv
            self._watchers.add(watcher)
            return watcher

    def start_watch_window(self) -> None:
        """Watches may start from the current resourceVersion on, not before: kube-apiserver
        serves them from its watch cache, which begins when it starts (a watch from
        resourceVersion 1 answers 410 Expired), while lists may still read older versions."""
        with self.lock:
            self._watch_from = self._rv

    def bookmark(self, watcher: Watcher) -> None:
        """Queue a BOOKMARK at the current resourceVersion, ordered after all earlier events."""
        with self.lock:
            watcher.queue.put((BOOKMARK, self._rv))

    def unwatch(self, watcher: Watcher) -> None:
        with self.lock:
            self._watchers.discard(watcher)

    def close_watches(self) -> int:
        """Close every open watch; returns how many were open."""
        with self.lock:
            watchers = list(self._watchers)
            self._watchers.clear()
        for watcher in watchers:
            watcher.close()
        return len(watchers)

    @property
    def open_watches(self) -> int:
        with self.lock:
            return len(self._watchers)
