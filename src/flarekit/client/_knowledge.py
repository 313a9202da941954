"""What one `Client` has learnt about its cluster, kept on the client itself.

Why: discovery answers (served versions), negotiated operator releases and similar facts cost
requests to find out and rarely change, so each is worked out once per client. Keeping them
on the client, rather than in module-level caches keyed by client, makes their lifetime the
client's and `Client.forget()` one call that drops them all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

__all__ = ["Knowledge"]

T = TypeVar("T")


class Knowledge:
    """Facts about a cluster by topic ("served", "negotiated", ...) and key; thread-safe."""

    def __init__(self) -> None:
        self._facts: dict[tuple[str, Hashable], object] = {}
        self._lock = threading.Lock()

    def get(self, topic: str, key: Hashable, expected: type[T]) -> T | None:
        """The fact learnt under (topic, key), or None; `expected` is its type."""
        with self._lock:
            value = self._facts.get((topic, key))
        return value if isinstance(value, expected) else None

    def put(self, topic: str, key: Hashable, value: T) -> T:
        with self._lock:
            self._facts[(topic, key)] = value
        return value

    def learn(self, topic: str, key: Hashable, expected: type[T], find: Callable[[], T]) -> T:
        """The fact under (topic, key), found with `find()` the first time it is asked for."""
        known = self.get(topic, key, expected)
        return known if known is not None else self.put(topic, key, find())

    def clear(self, topic: str | None = None) -> None:
        """Forget one topic, or everything."""
        with self._lock:
            if topic is None:
                self._facts.clear()
            else:
                for fact in [k for k in self._facts if k[0] == topic]:
                    del self._facts[fact]
