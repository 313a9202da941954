"""Waiting in tests for what another thread or process does: poll a check until it holds, and
fail naming what never came (never a bare sleep).

The deadline only matters when the awaited thing never comes, so it is generous: a loaded CI
machine runs the simulated controllers' threads, and the real operators, late.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    check: Callable[[], T], what: str, *, timeout: float = 30.0, poll: float = 0.01
) -> T:
    """The first truthy `check()` result; an `AssertionError` naming `what` once `timeout`
    seconds have passed without one."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting until {what}")
        time.sleep(poll)
