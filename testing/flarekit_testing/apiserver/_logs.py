"""Container logs and the `pods/{name}/log` subresource, standing in for the kubelet.

On a real cluster the apiserver checks the request (pod, container, options) and proxies it to
the kubelet, which reads the container's log file. Here the lines are what tests and simulated
controllers write (`FakeCluster.append_log`), each stamped with the time it was written, and
this module answers as the pair would: plain text, `timestamps` as RFC 3339 with nanoseconds
before each line, `tailLines`, `limitBytes`, `sinceSeconds` and `sinceTime` (whole seconds, as
the apiserver forwards it), and `follow` streams new lines until the container ends (its pod
finished, its status says terminated, or the pod is gone). Errors use the apiserver's and
kubelet's wording: a container must be named when a pod has several, `previous` finds no
terminated container (restarts are not modelled), a container of a pending pod that has
written nothing is "waiting to start".
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from flarekit_testing.apiserver import _errors
from flarekit_testing.apiserver import pods as _pods
from flarekit_testing.apiserver._request import Request, require_namespace
from flarekit_testing.apiserver._store import Event, Store

JSON = dict[str, Any]
LogKey = tuple[str, str, str]  # namespace, pod, container

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")
_NEGATIVE = "must be greater than or equal to 0"


@dataclass(frozen=True)
class Line:
    stamp: int  # nanoseconds since the epoch
    text: str


def format_stamp(nanos: int) -> str:
    """RFC 3339 with nine fractional digits, as the kubelet prefixes timestamped lines."""
    seconds, fraction = divmod(nanos, 10**9)
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction:09d}Z"


def parse_stamp(text: str) -> int:
    """Nanoseconds since the epoch from an RFC 3339 time (fractional seconds optional)."""
    raw = text.strip()
    fraction = 0
    main = raw
    if "." in raw:
        main, _, rest = raw.partition(".")
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        fraction = int((digits + "0" * 9)[:9]) if digits else 0
        main += rest
    moment = datetime.datetime.fromisoformat(main.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return int(moment.timestamp()) * 10**9 + fraction


class Dropped(Exception):
    """The test closed open log streams (`FakeCluster.drop_log_streams`)."""


class LogStore:
    """Lines per container, and a condition that wakes followers on new lines or pod changes."""

    def __init__(self) -> None:
        self._lines: dict[LogKey, list[Line]] = {}
        self._cond = threading.Condition()
        self._version = 0
        self._drops = 0
        self._closed = False
        self._last = 0
        self.open_streams = 0

    def append(self, key: LogKey, text: str) -> int:
        """Add `text` as lines (a missing final newline is implied); returns how many."""
        pieces = text.split("\n")
        if pieces and pieces[-1] == "":
            pieces.pop()
        with self._cond:
            bucket = self._lines.setdefault(key, [])
            for piece in pieces:
                self._last = max(time.time_ns(), self._last + 1)
                bucket.append(Line(self._last, piece.rstrip("\r")))
            self._version += 1
            self._cond.notify_all()
        return len(pieces)

    def lines(self, key: LogKey) -> list[Line]:
        with self._cond:
            return list(self._lines.get(key, ()))

    def has_lines(self, key: LogKey) -> bool:
        with self._cond:
            return bool(self._lines.get(key))

    def forget_pod(self, namespace: str, pod: str) -> None:
        with self._cond:
            for key in [k for k in self._lines if k[:2] == (namespace, pod)]:
                del self._lines[key]
            self._version += 1
            self._cond.notify_all()

    def poke(self) -> None:
        """Wake followers so they look at their pod again."""
        with self._cond:
            self._version += 1
            self._cond.notify_all()

    def drop(self) -> int:
        """Make every open follow stream end abruptly; returns how many there were."""
        with self._cond:
            self._drops += 1
            self._version += 1
            self._cond.notify_all()
            return self.open_streams

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._drops += 1
            self._version += 1
            self._cond.notify_all()

    def on_commit(self, event: Event) -> None:
        """Store listener: pods that change wake followers; deleted pods lose their logs."""
        group, plural, namespace, name = event.key
        if group != "" or plural != "pods":
            return
        if event.type == "DELETED":
            self.forget_pod(namespace, name)
        else:
            self.poke()

    def follow(self, key: LogKey, start: int, done: Callable[[], bool]) -> Iterator[Line]:
        """Lines from index `start` on, as they are written, until `done()` holds (checked
        without the condition held: it reads the store). Raises `Dropped` when dropped."""
        with self._cond:
            drops = self._drops
            self.open_streams += 1
        try:
            index = start
            while True:
                with self._cond:
                    fresh = self._lines.get(key, [])[index:]
                    index += len(fresh)
                    version, dropped = self._version, self._drops != drops
                yield from fresh
                if fresh:
                    continue
                if dropped:
                    raise Dropped()
                if done():
                    with self._cond:
                        rest = self._lines.get(key, [])[index:]
                    yield from rest
                    return
                with self._cond:
                    if self._version == version:
                        self._cond.wait(timeout=1.0)
        finally:
            with self._cond:
                self.open_streams -= 1


# -- the request ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogOptions:
    container: str
    follow: bool
    previous: bool
    timestamps: bool
    tail_lines: int | None
    limit_bytes: int | None
    since_seconds: int | None
    since_time: int | None  # nanoseconds, truncated to whole seconds


def _bool(req: Request, name: str) -> bool:
    raw = req.param(name)
    if raw is None or raw == "":
        return False
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise _errors.bad_request(f'strconv.ParseBool: parsing "{raw}": invalid syntax')


def _int(req: Request, name: str) -> int | None:
    raw = req.param(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise _errors.bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None


def options(req: Request) -> LogOptions:
    """PodLogOptions from the query, validated as the apiserver does (422 naming the field)."""
    tail, limit = _int(req, "tailLines"), _int(req, "limitBytes")
    since_seconds = _int(req, "sinceSeconds")
    raw_since = req.param("sinceTime")
    since_time = None
    if raw_since:
        try:
            since_time = parse_stamp(raw_since) // 10**9 * 10**9
        except ValueError:
            raise _errors.bad_request(
                f'parsing time "{raw_since}" as "2006-01-02T15:04:05Z07:00": cannot parse'
            ) from None
    causes = []
    if tail is not None and tail < 0:
        causes.append(
            _errors.Cause("FieldValueInvalid", f"Invalid value: {tail}: {_NEGATIVE}", "tailLines")
        )
    if limit is not None and limit < 1:
        causes.append(
            _errors.Cause(
                "FieldValueInvalid", f"Invalid value: {limit}: must be greater than 0", "limitBytes"
            )
        )
    if since_seconds is not None and since_time is not None:
        causes.append(
            _errors.Cause(
                "FieldValueForbidden",
                "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
                "",
            )
        )
    elif since_seconds is not None and since_seconds < 1:
        causes.append(
            _errors.Cause(
                "FieldValueInvalid",
                f"Invalid value: {since_seconds}: must be greater than 0",
                "sinceSeconds",
            )
        )
    if causes:
        raise _errors.invalid("PodLogOptions", "", req.name, causes)
    return LogOptions(
        container=req.param("container") or "",
        follow=_bool(req, "follow"),
        previous=_bool(req, "previous"),
        timestamps=_bool(req, "timestamps"),
        tail_lines=tail,
        limit_bytes=limit,
        since_seconds=since_seconds,
        since_time=since_time,
    )


def choose_container(pod: JSON, name: str, wanted: str) -> str:
    """The container a log request is about, or the apiserver's 400 when it is ambiguous."""
    containers = _pods.container_names(pod)
    init = _pods.container_names(pod, init=True)
    if wanted:
        if wanted not in containers and wanted not in init:
            raise _errors.bad_request(f"container {wanted} is not valid for pod {name}")
        return wanted
    if len(containers) == 1:
        return containers[0]
    if not containers:
        raise _errors.bad_request(f"a container name must be specified for pod {name}")
    message = (
        f"a container name must be specified for pod {name}, choose one of: "
        f"[{' '.join(containers)}]"
    )
    if init:
        message += f" or one of the init containers: [{' '.join(init)}]"
    raise _errors.bad_request(message)


@dataclass
class LogReply:
    """What to send: the lines there are now, and for `follow` a generator of later ones."""

    head: list[bytes]
    later: Iterator[bytes] | None
    limit: int | None


def _render(line: Line, timestamps: bool) -> bytes:
    text = f"{format_stamp(line.stamp)} {line.text}" if timestamps else line.text
    return (text + "\n").encode()


def open_log(store: Store, logs: LogStore, req: Request) -> LogReply:
    """Check a GET on `pods/{name}/log` and select its lines; raises the apiserver's errors."""
    require_namespace(store, req, req.name, creating=False)
    opts = options(req)
    pod = store.get(req.key())
    if pod is None:
        raise _errors.not_found("pods", "", req.name)
    container = choose_container(pod, req.name, opts.container)
    key = (req.namespace, req.name, container)
    if opts.previous:
        raise _errors.bad_request(
            f'previous terminated container "{container}" in pod "{req.name}" not found'
        )
    if _pods.phase(pod) == "Pending" and not logs.has_lines(key):
        raise _errors.bad_request(
            f'container "{container}" in pod "{req.name}" is waiting to start: ContainerCreating'
        )
    lines = logs.lines(key)
    start = len(lines)
    cutoff = None
    if opts.since_seconds is not None:
        cutoff = time.time_ns() - opts.since_seconds * 10**9
    elif opts.since_time is not None:
        cutoff = opts.since_time
    if cutoff is not None:
        lines = [line for line in lines if line.stamp >= cutoff]
    if opts.tail_lines is not None:
        lines = lines[len(lines) - opts.tail_lines :] if opts.tail_lines else []
    head = [_render(line, opts.timestamps) for line in lines]
    if not opts.follow:
        return LogReply(head, None, opts.limit_bytes)

    def done() -> bool:
        current = store.get(req.key())
        return (
            current is None
            or current["metadata"].get("uid") != pod["metadata"].get("uid")
            or _pods.is_finished(current)
            or _pods.container_terminated(current, container)
        )

    later = (_render(line, opts.timestamps) for line in logs.follow(key, start, done))
    return LogReply(head, later, opts.limit_bytes)
