"""The seam for simulated controllers (operators) that drive objects like a real cluster would.

A real cluster has operators (KubeRay, Kueue, ...) that react to objects and write status.
FakeCluster has none built in; a test or a later module can register objects implementing
`Controller`. They run on one background thread, in order, so they never race each other:
`on_event` is called for every committed change (from HTTP or direct access), and `on_tick`
every `tick_interval` seconds. They act through the cluster's direct-access methods
(`objects`, `set_status`, `create`, `patch`, `delete`), which go through the same store and
therefore produce watch events and new resourceVersions.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from flarekit_testing.apiserver._store import Event

if TYPE_CHECKING:
    from flarekit_testing.apiserver._server import FakeCluster


@runtime_checkable
class Controller(Protocol):
    """Reacts to committed changes and to the passage of time."""

    def on_event(self, cluster: FakeCluster, event: Event) -> None: ...

    def on_tick(self, cluster: FakeCluster) -> None: ...


class ControllerLoop:
    """Feeds committed events and ticks to registered controllers on one thread."""

    def __init__(self, cluster: FakeCluster, tick_interval: float) -> None:
        self._cluster = cluster
        self._tick_interval = tick_interval
        self._controllers: list[Controller] = []
        self._events: queue.Queue[Event | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.errors: list[BaseException] = []

    def add(self, controller: Controller) -> None:
        with self._lock:
            self._controllers.append(controller)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="flarekit-fake-controllers", daemon=True
                )
                self._thread.start()

    def offer(self, event: Event) -> None:
        if self._controllers:
            self._events.put(event)

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
                    return
                self._each(functools.partial(_deliver, cluster=self._cluster, event=event))
            if time.monotonic() >= next_tick:
                self._each(lambda c: c.on_tick(self._cluster))
                next_tick = time.monotonic() + self._tick_interval

    def _each(self, call: Callable[[Controller], None]) -> None:
        for controller in list(self._controllers):
            try:
                call(controller)
            except Exception as exc:  # a broken controller must not kill the loop
                self.errors.append(exc)


def _deliver(controller: Controller, cluster: FakeCluster, event: Event) -> None:
    controller.on_event(cluster, event)
