"""When to retry a failed request, and how long to wait first.

An overloaded apiserver answers 429 (with `Retry-After`) or 503, and networks drop connections;
a client that gives up at once turns every blip into a failed training job, while one that
retries without bound hides a dead cluster. Only idempotent requests are retried (sending them
twice cannot do anything twice): reads, watches, replace (guarded by resourceVersion), delete,
merge patch and server-side apply. Create and JSON patch are never retried.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

__all__ = ["RetryPolicy"]

RETRY_STATUSES = frozenset({429, 503})

# Indirection so tests can observe waits without slowing down or patching `time` globally.
_sleep = time.sleep


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter; `Retry-After` wins when the server sends it.

    `attempts` counts every try, the first one included (1 disables retries). Waits grow
    from `backoff` by `factor` up to `max_backoff`; a server's `Retry-After` is honoured up to
    `max_retry_after` seconds.
    """

    attempts: int = 5
    backoff: float = 0.2
    factor: float = 2.0
    max_backoff: float = 5.0
    max_retry_after: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be at least 1, got {self.attempts}")
        for name in ("backoff", "max_backoff", "max_retry_after"):
            if getattr(self, name) < 0:
                raise ValueError(f"RetryPolicy.{name} must not be negative")
        if self.factor < 1:
            raise ValueError(f"RetryPolicy.factor must be at least 1, got {self.factor}")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before try number `attempt + 1` (`attempt` counts from 1)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        base = min(self.backoff * self.factor ** (attempt - 1), self.max_backoff)
        return base * random.uniform(0.5, 1.0)

    def wait(self, attempt: int, retry_after: float | None = None) -> None:
        _sleep(self.delay(attempt, retry_after))


NO_RETRY = RetryPolicy(attempts=1)
