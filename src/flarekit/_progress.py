"""Showing that a wait is alive: a progress line in a terminal, nothing anywhere else.

Waiting for a cluster or a job can take minutes; a user at a terminal wants to see what is
being awaited, what the server reports right now and how much time is left. Logs, CI runs and
notebooks (which get an HTML status through `_repr_html_` instead) must stay free of
carriage-return noise, so the display is shown only when stderr is a terminal and no CI
variable is set. `rich` draws it when it happens to be installed (it is not a dependency);
otherwise one plain line on stderr is rewritten in place.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Protocol, TextIO

__all__ = ["NullProgress", "PlainProgress", "Progress", "interactive", "open_progress"]

_CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")


class Progress(Protocol):
    """What a wait reports to: `update` after every poll, `close` once at the end."""

    def update(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    """Shows nothing: for pipes, log files, CI and `progress=False`."""

    def update(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> None:
        return None

    def close(self) -> None:
        return None


def _shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


class PlainProgress:
    """One line on a terminal, rewritten in place (`\\r`), cleared when the wait ends."""

    def __init__(self, what: str, stream: TextIO, width: int = 100) -> None:
        self._what = what
        self._stream = stream
        self._width = width
        self._shown = 0

    def render(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> str:
        """The line for one update (without the carriage return)."""
        count = f" {done}/{total}" if done is not None and total is not None else ""
        head = f"waiting for {self._what}{count} [{elapsed:.0f}s/{timeout:.0f}s]"
        line = f"{head}: {state}" if state else head
        return _shorten(line, self._width)

    def update(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> None:
        line = self.render(elapsed=elapsed, timeout=timeout, state=state, done=done, total=total)
        padding = " " * max(self._shown - len(line), 0)
        self._stream.write("\r" + line + padding)
        self._stream.flush()
        self._shown = len(line)

    def close(self) -> None:
        if self._shown:
            self._stream.write("\r" + " " * self._shown + "\r")
            self._stream.flush()
            self._shown = 0


class _RichProgress:
    """The same information drawn by `rich` (a transient bar over the time budget)."""

    def __init__(self, what: str, stream: TextIO, timeout: float) -> None:
        progress_mod: Any = importlib.import_module("rich.progress")
        console_mod: Any = importlib.import_module("rich.console")
        self._escape: Any = importlib.import_module("rich.markup").escape
        self._what = what
        self._progress: Any = progress_mod.Progress(
            progress_mod.SpinnerColumn(),
            progress_mod.TextColumn("{task.description}"),
            progress_mod.BarColumn(),
            progress_mod.TimeElapsedColumn(),
            console=console_mod.Console(file=stream),
            transient=True,
            # Leave the user's own prints alone while the bar is shown.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._task: Any = self._progress.add_task(
            self._escape(f"waiting for {what}"), total=timeout or None
        )
        self._progress.start()

    def update(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> None:
        count = f" {done}/{total}" if done is not None and total is not None else ""
        description = f"waiting for {self._what}{count}: {_shorten(state, 60)}"
        # Rich reads descriptions as markup; the server's text must show as written.
        self._progress.update(self._task, completed=elapsed, description=self._escape(description))

    def close(self) -> None:
        self._progress.stop()


def interactive(stream: TextIO | None = None) -> bool:
    """True when `stream` (stderr by default) is a terminal and no CI system is detected."""
    stream = sys.stderr if stream is None else stream
    if any(os.environ.get(name) for name in _CI_VARIABLES):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # closed or detached streams
        return False


def _rich_available() -> bool:
    try:
        importlib.import_module("rich.progress")
    except ImportError:
        return False
    return True


def open_progress(
    what: str, *, timeout: float, enabled: bool = True, stream: TextIO | None = None
) -> Progress:
    """The display for one wait: rich or plain on an interactive terminal, else nothing."""
    stream = sys.stderr if stream is None else stream
    if not enabled or not interactive(stream):
        return NullProgress()
    if _rich_available():
        return _RichProgress(what, stream, timeout)
    return PlainProgress(what, stream)
