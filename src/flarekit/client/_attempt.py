"""One attempt of a request: a deadline for all of it, and how far it got before it failed.

Why: urllib3's timeouts bound each socket operation, not a request. A server that sends one
byte every few seconds (of its headers or of its body) keeps a request alive for as long as
it likes, since every read succeeds in time. And when a request fails, whether it may have
reached the server decides what a client may do next: a create whose connection broke while
it was being opened was certainly not sent, so it can be sent again at once, while one that
broke later may have been carried out.

So each attempt is registered with a watchdog thread that shuts its socket down when the
deadline passes (the blocked read then fails at once), and the connections of the client's
pool record, on the attempt of the thread using them, that a new connection is being opened
and when it is open.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Attempt", "track_connections", "watched"]

_local = threading.local()


class Attempt:
    """The state of one attempt; `expired` once its deadline passed and it was cut off."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.expired = False
        self.done = False
        #: A new connection was being opened for this attempt...
        self.connecting = False
        #: ...and it was opened (TCP, and TLS for https).
        self.connected = False
        self._abort: Callable[[], None] | None = None
        self._lock = threading.Lock()

    @property
    def unsent(self) -> bool:
        """Whether the attempt failed while its connection was being opened: nothing of the
        request can have reached the server."""
        return self.connecting and not self.connected

    def bind(self, abort: Callable[[], None]) -> None:
        """What to call to cut the attempt off (shut its socket down)."""
        with self._lock:
            self._abort = abort
            late = self.expired
        if late:
            _quietly(abort)

    def bind_socket(self, sock: socket.socket | None) -> None:
        if sock is not None:
            # The plain socket's shutdown, also for TLS sockets: `SSLSocket.shutdown` unwraps
            # the socket under the reading thread's feet; this makes its read see the end.
            self.bind(lambda: socket.socket.shutdown(sock, socket.SHUT_RDWR))

    def expire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.expired = True
            abort = self._abort
        if abort is not None:
            _quietly(abort)


def _quietly(action: Callable[[], None]) -> None:
    with contextlib.suppress(OSError, ValueError, RuntimeError):
        action()


class _Watchdog:
    """One daemon thread cutting off every attempt whose deadline has passed."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._queue: list[tuple[float, int, Attempt]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, attempt: Attempt) -> None:
        with self._condition:
            heapq.heappush(self._queue, (attempt.deadline, next(self._order), attempt))
            if self._thread is None or not self._thread.is_alive():  # none yet, or forked
                self._thread = threading.Thread(
                    target=self._run, name="flarekit-request-deadlines", daemon=True
                )
                self._thread.start()
            self._condition.notify()

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._queue and self._queue[0][2].done:
                    heapq.heappop(self._queue)
                if not self._queue:
                    self._condition.wait()
                    continue
                wait = self._queue[0][0] - time.monotonic()
                if wait > 0:
                    self._condition.wait(wait)
                    continue
                attempt = heapq.heappop(self._queue)[2]
            attempt.expire()


_watchdog = _Watchdog()


@contextlib.contextmanager
def watched(deadline: float, abort: Callable[[], None] | None = None) -> Iterator[Attempt]:
    """Run an attempt that is cut off at `deadline` (monotonic time): with `abort` (a stream
    already open), by calling it; else by shutting down the socket of the connection that
    this thread's request uses meanwhile."""
    attempt = Attempt(deadline)
    tracking = abort is None
    previous = getattr(_local, "attempt", None)
    if tracking:
        _local.attempt = attempt
    else:
        attempt.bind(abort)  # type: ignore[arg-type]
    _watchdog.add(attempt)
    try:
        yield attempt
    finally:
        with attempt._lock:
            attempt.done = True
        if tracking:
            _local.attempt = previous


def _current() -> Attempt | None:
    found: Attempt | None = getattr(_local, "attempt", None)
    return found


def _tracked(base: type[Any]) -> type[Any]:
    """A subclass of urllib3 connection class `base` that reports to the thread's attempt."""

    class Tracked(base):  # type: ignore[misc]
        def _new_conn(self) -> socket.socket:
            sock: socket.socket = super()._new_conn()
            attempt = _current()
            if attempt is not None:
                attempt.bind_socket(sock)  # the TLS handshake can be cut off too
            return sock

        def connect(self) -> None:
            attempt = _current()
            if attempt is not None:
                attempt.connecting = True
            super().connect()
            if attempt is not None:
                attempt.connected = True
                attempt.bind_socket(self.sock)

        def request(self, *args: Any, **kwargs: Any) -> None:
            attempt = _current()
            if attempt is not None and self.sock is not None:
                attempt.bind_socket(self.sock)  # a connection reused from the pool
            super().request(*args, **kwargs)

    Tracked.__name__ = Tracked.__qualname__ = f"Tracked{base.__name__}"
    return Tracked


def track_connections(pool_manager: Any) -> bool:
    """Make the connections `pool_manager` opens report to their attempts. Only urllib3's
    own pool classes are replaced (a SOCKS proxy's are left alone: its requests are then
    bounded between reads but not within one); False when left alone."""
    import urllib3
    from urllib3 import connection, connectionpool, poolmanager

    if pool_manager.pool_classes_by_scheme is not poolmanager.pool_classes_by_scheme:
        return False
    if pool_manager.pools:
        return False  # connections already made would not report

    class HTTPPool(urllib3.HTTPConnectionPool):
        ConnectionCls = _tracked(connection.HTTPConnection)

    class HTTPSPool(connectionpool.HTTPSConnectionPool):
        ConnectionCls = _tracked(connection.HTTPSConnection)

    pool_manager.pool_classes_by_scheme = {"http": HTTPPool, "https": HTTPSPool}
    return True
