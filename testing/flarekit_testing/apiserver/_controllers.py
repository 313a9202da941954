"""The seam for simulated controllers (operators) that drive objects like a real cluster would.

A real cluster has operators (KubeRay, Kueue, ...) that react to objects and write status.
FakeCluster has none built in; a test or a later module can register objects implementing
`Controller`. They run on one background thread, in order, so they never race each other:
`on_event` is called for every committed change (from HTTP or direct access), and `on_tick`
every `tick_interval` seconds. They act through the cluster's direct-access methods
(`objects`, `set_status`, `create`, `patch`, `delete`), which go through the same store and
therefore produce watch events and new resourceVersions.

A controller that raises does not stop the loop (the others go on), but its exception is not
lost either: besides the cluster's `controller_errors`, every one is recorded process-wide as
a `ControllerFailure`, which the pytest plugin (`flarekit_testing.pytest_plugin`) turns into a
failure of the test during which it happened. A test that checks that a queued job "stays
suspended" must not pass because the operator that would have started it died.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from flarekit_testing.apiserver._store import Event

#: The cluster a controller acts on (FakeCluster: the loop only hands it over).
C = TypeVar("C")
C_contra = TypeVar("C_contra", contravariant=True)


@runtime_checkable
class Controller(Protocol[C_contra]):
    """Reacts to committed changes and to the passage of time."""

    def on_event(self, cluster: C_contra, event: Event) -> None: ...

    def on_tick(self, cluster: C_contra) -> None: ...


@dataclass(frozen=True)
class ControllerFailure:
    """An exception a simulated controller raised: which controller, on which cluster, and
    its traceback."""

    controller: str
    cluster: str
    error: BaseException
    traceback: str

    def describe(self) -> str:
        return f"{self.controller} on {self.cluster} raised:\n{self.traceback.rstrip()}"


_failures: list[ControllerFailure] = []
_claimed = 0
_failures_lock = threading.Lock()


def _record(failure: ControllerFailure) -> None:
    with _failures_lock:
        _failures.append(failure)


def claim_failures() -> list[ControllerFailure]:
    """The controller failures of this process not claimed before (each is claimed once)."""
    global _claimed
    with _failures_lock:
        new = _failures[_claimed:]
        _claimed = len(_failures)
    return new


class ControllerLoop(Generic[C]):
    """Feeds committed events and ticks to registered controllers on one thread."""

    def __init__(self, cluster: C, tick_interval: float) -> None:
        self._cluster = cluster
        self._tick_interval = tick_interval
        self._controllers: list[Controller[C]] = []
        self._events: queue.Queue[Event | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.errors: list[BaseException] = []
        # Work offered and not yet done, for `settle`.
        self._pending = 0
        self._busy = False
        self._idle = threading.Condition()

    def add(self, controller: Controller[C]) -> None:
        with self._lock:
            self._controllers.append(controller)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="flarekit-fake-controllers", daemon=True
                )
                self._thread.start()

    def offer(self, event: Event) -> None:
        if self._controllers:
            with self._idle:
                self._pending += 1
            self._events.put(event)

    def settle(self, timeout: float = 5.0) -> bool:
        """Wait until every event offered so far has been delivered and no tick is running;
        whether that happened within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending or self._busy:
                if self._thread is None:
                    return True  # stopped: nothing more will run
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def stop(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._events.put(None)
            thread.join(timeout=5)
        for controller in self._controllers:
            close = getattr(controller, "close", None)
            if callable(close):
                close()  # local execution: end the processes of pods still running

    def _run(self) -> None:
        # Ticks keep their schedule even while events keep arriving, so that time-driven
        # controllers make progress under a steady stream of writes.
        next_tick = time.monotonic() + self._tick_interval
        while True:
            try:
                event = self._events.get(timeout=max(0.0, next_tick - time.monotonic()))
            except queue.Empty:
                pass
            else:
                if event is None:
                    with self._idle:
                        self._idle.notify_all()
                    return
                self._work(functools.partial(_deliver, cluster=self._cluster, event=event))
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()
            if time.monotonic() >= next_tick:
                self._work(lambda c: c.on_tick(self._cluster))
                next_tick = time.monotonic() + self._tick_interval

    def _work(self, call: Callable[[Controller[C]], None]) -> None:
        with self._idle:
            self._busy = True
        try:
            self._each(call)
        finally:
            with self._idle:
                self._busy = False
                self._idle.notify_all()

    def _each(self, call: Callable[[Controller[C]], None]) -> None:
        for controller in list(self._controllers):
            try:
                call(controller)
            except Exception as exc:  # a broken controller must not kill the loop
                self.errors.append(exc)
                _record(
                    ControllerFailure(
                        type(controller).__name__,
                        _describe(self._cluster),
                        exc,
                        "".join(traceback.format_exception(exc)),
                    )
                )


def _describe(cluster: object) -> str:
    try:
        return f"the FakeCluster at {getattr(cluster, 'url')}"  # noqa: B009 (any cluster)
    except (RuntimeError, AttributeError):  # not serving
        return "a FakeCluster"


def _deliver(controller: Controller[C], cluster: C, event: Event) -> None:
    controller.on_event(cluster, event)
