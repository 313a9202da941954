"""Waiting for a Kubernetes object to reach a state, with clear endings.

Every "wait until ready / finished / admitted" in flarekit is this one loop, so they all behave
alike: poll with exponential backoff (fast at first, then at most every `max_poll` seconds so a
long wait does not hammer the apiserver), show progress in a terminal, tolerate objects whose
`status` is still missing (a fresh object simply keeps the wait going), and end in one of three
ways: the awaited object, `TerminalFailure` quoting the reason the server gave, or
`WaitTimeout` saying what was awaited, for how long and what was last seen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from flarekit._progress import Progress, open_progress
from flarekit._tables import HtmlStatus

__all__ = [
    "Clock",
    "HtmlStatus",
    "SystemClock",
    "TerminalFailure",
    "WaitError",
    "WaitTimeout",
    "backoff_delays",
    "summarize_state",
    "wait_until",
]

T = TypeVar("T")


class Clock(Protocol):
    """Where a wait reads time and sleeps; tests pass a fake one that sleeps instantly."""

    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock: `time.monotonic` (immune to wall-clock jumps) and `time.sleep`."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class WaitError(Exception):
    """A wait ended without the awaited state; `what` says what was awaited."""

    def __init__(self, message: str, *, what: str, last_state: str) -> None:
        super().__init__(message)
        self.what = what
        self.last_state = last_state


class WaitTimeout(WaitError, TimeoutError):
    """The time ran out; the object may still get there (the wait can be repeated)."""

    def __init__(self, *, what: str, timeout: float, elapsed: float, last_state: str) -> None:
        message = (
            f"timed out after {elapsed:.1f}s (timeout {timeout:g}s) waiting for {what}; "
            f"last observed state: {last_state}"
        )
        super().__init__(message, what=what, last_state=last_state)
        self.timeout = timeout
        self.elapsed = elapsed


class TerminalFailure(WaitError):
    """The object reached a state it cannot leave by itself (failed, rejected, evicted...)."""

    def __init__(self, *, what: str, reason: str, last_state: str) -> None:
        super().__init__(f"{what} failed: {reason}", what=what, last_state=last_state)
        self.reason = reason


def backoff_delays(poll: float, max_poll: float, factor: float = 1.5) -> Callable[[], float]:
    """Successive sleep lengths: `poll`, then growing by `factor`, never above `max_poll`."""
    if poll <= 0:
        raise ValueError(f"poll must be a positive number of seconds, got {poll!r}")
    if max_poll < poll:
        raise ValueError(f"max_poll must be at least poll ({poll!r}), got {max_poll!r}")
    current = poll

    def next_delay() -> float:
        nonlocal current
        delay = current
        current = min(current * factor, max_poll)
        return delay

    return next_delay


def _get(obj: object, key: str) -> object:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def summarize_state(obj: object) -> str:
    """A short description of what an object reports, for progress lines and errors.

    Reads `status.state` / `status.phase` / `jobDeploymentStatus` / the condition that is
    true, whichever exists, from typed models and plain dicts alike; never raises.
    """
    if obj is None:
        return "not found"
    status = _get(obj, "status")
    if status is None:
        return "no status reported yet"
    parts: list[str] = []
    for key in ("state", "phase", "job_deployment_status", "jobDeploymentStatus", "job_status"):
        value = _get(status, key)
        if value not in (None, ""):
            parts.append(f"{key}={getattr(value, 'value', value)}")
    found = _get(status, "conditions")
    conditions = found if isinstance(found, list | tuple) else []
    true_types = [
        str(_get(c, "type")) for c in conditions if str(_get(c, "status")).lower() == "true"
    ]
    if true_types:
        parts.append("conditions=" + ",".join(true_types))
    for key in ("reason", "message"):
        value = _get(status, key)
        if value:
            parts.append(f"{key}={value}")
    return "; ".join(parts) if parts else "status has no state yet"


def _check_timeout(timeout: float) -> None:
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
        raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")


def wait_until(
    fetch: Callable[[], T],
    done: Callable[[T], bool],
    failed: Callable[[T], str | bool | None] | None,
    *,
    timeout: float,
    describe: str,
    poll: float = 0.5,
    max_poll: float = 5.0,
    progress: bool | Progress = True,
    clock: Clock | None = None,
    state: Callable[[T], str] | None = None,
    count: Callable[[T], tuple[int, int] | None] | None = None,
) -> T:
    """Poll `fetch()` until `done(obj)`; return the last object fetched.

    - `failed(obj)` returns the server's reason (a string) when the object can no longer
      succeed, else `None`/`False`; `True` means failed without a reason (the state is used).
    - `describe` names what is awaited ("RayCluster ns/name to be ready").
    - `state(obj)` summarises what was observed (default: :func:`summarize_state`);
      `count(obj)` may return `(ready, desired)` for the progress display.
    - `done`, `failed`, `state` and `count` see objects whose `status` may be missing: they
      should treat that as "not yet", and a `KeyError`/`AttributeError` they raise is taken
      as "not yet" too rather than ending the wait.
    - `fetch` errors propagate (a missing object is the caller's to interpret).

    Raises `TerminalFailure` or `WaitTimeout`; `timeout=0` checks exactly once.
    """
    _check_timeout(timeout)
    next_delay = backoff_delays(poll, max_poll)
    clock = SystemClock() if clock is None else clock
    summarize: Callable[[T], str] = summarize_state if state is None else state
    start = clock.now()
    display = open_progress(describe, timeout=timeout, enabled=progress)
    try:
        while True:
            obj = fetch()
            last = _safely(summarize, obj, "state not readable")
            reason = _safely(failed, obj, None) if failed is not None else None
            if reason:
                text = last if reason is True else str(reason)
                raise TerminalFailure(what=describe, reason=text, last_state=last)
            finished = _safely(done, obj, False)
            elapsed = clock.now() - start
            counts = _safely(count, obj, None) if count is not None else None
            ready, total = counts if counts is not None else (None, None)
            # Also after the last poll: a display that stays (a notebook's) ends on the state
            # the wait ended in, not on the one before.
            display.update(elapsed=elapsed, timeout=timeout, state=last, done=ready, total=total)
            if finished:
                return obj
            remaining = timeout - elapsed
            if remaining <= 0:
                raise WaitTimeout(what=describe, timeout=timeout, elapsed=elapsed, last_state=last)
            clock.sleep(min(next_delay(), remaining))
    finally:
        display.close()


R = TypeVar("R")


def _safely(func: Callable[[T], R], obj: T, default: R) -> R:
    """`func(obj)`, or `default` when it trips over a field the server has not filled in yet."""
    try:
        return func(obj)
    except (KeyError, AttributeError, IndexError, TypeError):
        return default
