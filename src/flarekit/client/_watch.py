"""Watches that survive the network: resume where they stopped, relist when history is gone.

A raw watch connection ends all the time (server timeouts, load balancers, restarts), and a
client that reconnects naively either misses the changes made while it was away or replays
them. This iterator lists first (a consistent snapshot, reported as ADDED events), then
watches from that snapshot's resourceVersion, advancing it with every event and bookmark and
reconnecting from the last one, so each change is reported exactly once. If the server no
longer has that version (410 Gone), it lists again and reports the difference to what it had
seen (ADDED, MODIFIED, DELETED), as informers do.

A line that is not a watch event of the kind watched (garbage from a proxy, an object the
model refuses, a line beyond `ReadLimits.max_watch_line_bytes`) is logged as the error it is
and the watch reconnects from the last good resourceVersion, so nothing before it is lost or
repeated; if every connection brings such a line first, the watch ends with `ApiUnavailable`
(reason ``BadWatchEvent``) saying what was wrong, after as many tries as the retry policy has.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from flarekit._objects import metadata_of
from flarekit.client._codec import StatusBody, WatchLine
from flarekit.client._errors import Gone, Operation, unavailable
from flarekit.client._failures import error_from_status
from flarekit.client._limits import TooLarge, UnsupportedEncoding, split_lines
from flarekit.client._retry import RetryPolicy
from flarekit.client._transport import Response
from flarekit_models import KubeResource

if TYPE_CHECKING:
    from urllib3 import BaseHTTPResponse

__all__ = ["Watch", "WatchEvent"]

logger = logging.getLogger("flarekit.client")

R = TypeVar("R", bound=KubeResource)
EventType = Literal["ADDED", "MODIFIED", "DELETED"]
Key = tuple[str, str]

#: Longest single watch request; the server ends it and we reconnect, which keeps
#: half-open connections from hanging a watch forever.
MAX_CONNECTION_SECONDS = 300
#: Extra read time beyond the server's own timeout before a silent connection counts as dead.
READ_MARGIN = 30.0

OpenStream = Callable[[str, int], Response]
Relist = Callable[[], tuple[Sequence[R], str]]


class _BadLine(Exception):
    """A watch line that is not an event of the kind watched."""


@dataclass(frozen=True)
class WatchEvent(Generic[R]):
    """One change: `type` is ADDED, MODIFIED or DELETED; `object` the object after it."""

    type: EventType
    object: R


def _key(obj: KubeResource) -> Key:
    meta = metadata_of(obj)
    return (meta.namespace or "", meta.name or "") if meta is not None else ("", "")


def _version(obj: KubeResource) -> str:
    meta = metadata_of(obj)
    return str(meta.resource_version or "") if meta is not None else ""


class Watch(Generic[R]):
    """An iterator of `WatchEvent`s that reconnects by itself. Ends after `timeout` seconds
    (None: never) or `close()`; use it in a `with` block or `for` loop and `break` freely."""

    def __init__(
        self,
        kind: type[R],
        operation: Operation,
        open_stream: OpenStream,
        relist: Relist[R],
        resource_version: str | None,
        timeout: float | None,
        retry: RetryPolicy,
    ) -> None:
        self._line = WatchLine[kind]  # type: ignore[valid-type]
        self._kind = kind.__name__
        self._problem = ""
        self._operation = operation
        self._open_stream = open_stream
        self._relist = relist
        self._resume_from = resource_version or None
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._retry = retry
        self._known: dict[Key, R] = {}
        self._stopped = False
        self._current: BaseHTTPResponse | None = None
        self._events = self._run()
        self.reconnects = 0
        self.relists = 0

    @property
    def resource_version(self) -> str | None:
        """The version the watch would resume from: the last event's or bookmark's."""
        return self._resume_from

    def __iter__(self) -> Iterator[WatchEvent[R]]:
        return self

    def __next__(self) -> WatchEvent[R]:
        return next(self._events)

    def __enter__(self) -> Watch[R]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the watch; safe to call from another thread while it waits for events."""
        self._stopped = True
        raw = self._current
        if raw is not None:
            with contextlib.suppress(Exception):
                raw.shutdown()
        with contextlib.suppress(ValueError):  # ValueError: running in another thread
            self._events.close()

    # -- the loop ----------------------------------------------------------------------------

    def _remaining(self) -> float | None:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def _run(self) -> Generator[WatchEvent[R], None, None]:
        if self._resume_from is None:
            items, self._resume_from = self._relist()
            for obj in items:
                self._known[_key(obj)] = obj
                yield WatchEvent("ADDED", obj)
        failures = 0
        while not self._stopped:
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                return
            seconds = MAX_CONNECTION_SECONDS if remaining is None else math.ceil(remaining)
            seconds = max(1, min(seconds, MAX_CONNECTION_SECONDS))
            try:
                response = self._open_stream(self._resume_from, seconds)
            except Gone:
                yield from self._resync()
                continue
            outcome = yield from self._consume(response)
            if outcome == "gone":
                yield from self._resync()
                failures = 0
            elif outcome in ("dropped", "bad"):
                failures += 1
                if failures >= self._retry.attempts:
                    if outcome == "bad":
                        raise unavailable(self._operation, "BadWatchEvent", self._problem)
                    raise unavailable(
                        self._operation, "WatchDropped", "the watch connection kept failing"
                    )
                self._retry.wait(failures)
            else:
                failures = 0
            self.reconnects += 1

    def _decode(self, line: bytes, number: int) -> Any:
        """The event on `line` (a `WatchLine` of the kind), or `_BadLine` saying what is
        wrong with it (never the line itself: it may hold anything)."""
        from pydantic import ValidationError

        try:
            return self._line.model_validate_json(line)
        except ValidationError as exc:
            errors = exc.errors(include_input=False)
            loc = errors[0]["loc"] if errors else ()
            where = ".".join(str(part) for part in loc) or "the line"
            message = errors[0]["msg"] if errors else "invalid"
            raise _BadLine(
                f"line {number} of the watch is not a {self._kind} watch event: {where}: "
                f"{message} ({exc.error_count()} problem(s))"
            ) from None

    def _consume(self, response: Response) -> Generator[WatchEvent[R], None, str]:
        """Yield the events of one connection; returns "ended", "dropped", "gone" or "bad"."""
        import urllib3

        raw = response.raw
        self._current = raw
        progressed = False
        lines = split_lines(
            response.chunks(),
            response.limits.max_watch_line_bytes,
            "a watch event",
            "max_watch_line_bytes",
        )
        try:
            for number, line in enumerate(lines, 1):
                event = self._decode(line, number)
                obj = event.object
                if isinstance(obj, StatusBody):
                    if obj.code == 410:
                        return "gone"
                    raise error_from_status(self._operation, obj.code, obj)
                progressed = True
                if event.type == "BOOKMARK":
                    self._resume_from = _version(obj) or self._resume_from
                    continue
                if event.type not in ("ADDED", "MODIFIED", "DELETED"):
                    logger.debug("ignoring watch event of type %r", event.type)
                    continue
                self._resume_from = _version(obj) or self._resume_from
                if event.type == "DELETED":
                    self._known.pop(_key(obj), None)
                else:
                    self._known[_key(obj)] = obj
                yield WatchEvent(event.type, obj)
        except (_BadLine, TooLarge, UnsupportedEncoding) as exc:
            if self._stopped:
                return "ended"
            self._problem = str(exc)
            logger.warning(
                "%s: %s; resuming from resourceVersion %s",
                self._operation.describe(),
                exc,
                self._resume_from,
            )
            return "ended" if progressed else "bad"
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if self._stopped:
                return "ended"
            logger.debug("watch connection lost (%s); resuming", type(exc).__name__)
            return "ended" if progressed else "dropped"
        finally:
            self._current = None
            with contextlib.suppress(Exception):
                raw.close()
                raw.release_conn()
        return "ended"

    def _resync(self) -> Iterator[WatchEvent[R]]:
        """List again after 410 Gone and report what changed since the last event seen."""
        self.relists += 1
        items, version = self._relist()
        seen: set[Key] = set()
        for obj in items:
            key = _key(obj)
            seen.add(key)
            old = self._known.get(key)
            self._known[key] = obj
            if old is None:
                yield WatchEvent("ADDED", obj)
            elif _version(old) != _version(obj):
                yield WatchEvent("MODIFIED", obj)
        for key in [k for k in self._known if k not in seen]:
            yield WatchEvent("DELETED", self._known.pop(key))
        self._resume_from = version
