"""Showing that a wait is alive: a progress line in a terminal, nothing anywhere else.

Waiting for a cluster or a job can take minutes; a user wants to see what is being awaited,
what the server reports right now and how much time is left. Logs and CI runs must stay free
of carriage-return noise, so a terminal display is shown only when stderr is a terminal and no
CI variable is set. `rich` draws it when it happens to be installed (it is not a dependency);
otherwise one plain line on stderr is rewritten in place. In a Jupyter kernel with ipywidgets
installed (the ``widgets`` extra) the same line is a live widget under the running cell. A
caller may also pass its own `Progress` (the notebook widgets show a wait in their own panel).
"""

from __future__ import annotations

import html
import importlib
import os
import sys
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

__all__ = [
    "NotebookProgress",
    "NullProgress",
    "PlainProgress",
    "Progress",
    "interactive",
    "open_progress",
]

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


def terminal_columns(stream: TextIO) -> int:
    """How wide the terminal behind `stream` is (``$COLUMNS``, else 80 when it cannot say)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):
        try:
            return int(os.environ.get("COLUMNS", "")) or 80
        except ValueError:
            return 80


def fit(head: str, state: str, width: int) -> str:
    """``head: state`` in at most `width` characters: the server's text is shortened first,
    since the head says what is awaited and how much time is left."""
    head = _shorten(head, width)
    room = width - len(head) - 2
    if not state or room < 4:
        return head
    return f"{head}: {_shorten(state, room)}"


class PlainProgress:
    """One line on a terminal, rewritten in place (`\\r`), cleared when the wait ends. It
    stays within the terminal's width (`width`, default: the terminal's, one column spare so
    that the line never wraps), or a rewritten line would leave its wrapped rest behind."""

    def __init__(self, what: str, stream: TextIO, width: int | None = None) -> None:
        self._what = what
        self._stream = stream
        self._width = terminal_columns(stream) - 1 if width is None else width
        self._shown = 0

    def render(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> str:
        """The line for one update (without the carriage return)."""
        count = f" {done}/{total}" if done is not None and total is not None else ""
        head = f"waiting for {self._what}{count} [{elapsed:.0f}s/{timeout:.0f}s]"
        return fit(head, state, self._width)

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
        # Imported here: rich is optional, and only an interactive wait with rich uses it.
        from rich.console import Console
        from rich.markup import escape
        from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._escape = escape
        self._what = what
        console = Console(file=stream)
        # The bar (12) and elapsed time (7) keep their place; the text gets the rest of the
        # line, less the spinner, the spaces between columns and a spare last column, and is
        # shortened to fit, or a long text would wrap and push the bar off the line.
        self._text_width = max(console.width - 1 - 12 - 7 - 1 - 3, 10)
        self._progress: RichProgress = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=12),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            # Leave the user's own prints alone while the bar is shown.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._task: TaskID = self._progress.add_task(
            self._escape(_shorten(f"waiting for {what}", self._text_width)), total=timeout or None
        )
        self._progress.start()

    def update(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> None:
        count = f" {done}/{total}" if done is not None and total is not None else ""
        description = fit(f"waiting for {self._what}{count}", state, self._text_width)
        # Rich reads descriptions as markup; the server's text must show as written.
        self._progress.update(self._task, completed=elapsed, description=self._escape(description))

    def close(self) -> None:
        self._progress.stop()


class NotebookProgress:
    """The line a terminal shows, as an ipywidgets `HTML` widget that is updated in place.

    `widget` is the ipywidgets object (show it with IPython's `display`); after `close()` it
    keeps the last line, marked as finished, so a notebook shows how the wait ended.
    """

    def __init__(self, what: str, *, widget: Any = None) -> None:
        widgets: Any = importlib.import_module("ipywidgets")
        self._line = PlainProgress(what, sys.stderr, width=160)  # a cell is wider than a tty
        self.widget: Any = widgets.HTML() if widget is None else widget
        self.widget.value = self._html(f"waiting for {what}", running=True)
        self.text = f"waiting for {what}"
        self.closed = False

    @staticmethod
    def _html(text: str, *, running: bool) -> str:
        mark = "&#8987;" if running else "&#10003;"
        return f"<code>{mark} {html.escape(text)}</code>"

    def update(
        self, *, elapsed: float, timeout: float, state: str, done: int | None, total: int | None
    ) -> None:
        self.text = self._line.render(
            elapsed=elapsed, timeout=timeout, state=state, done=done, total=total
        )
        self.widget.value = self._html(self.text, running=True)

    def close(self) -> None:
        self.closed = True
        self.widget.value = self._html(f"{self.text} (wait ended)", running=False)


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython with a kernel attached), not in a plain shell."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        ipython: Any = importlib.import_module("IPython").get_ipython()
    except ImportError:
        return False
    return ipython is not None and getattr(ipython, "kernel", None) is not None


def _widgets_available() -> bool:
    try:
        importlib.import_module("ipywidgets")
    except ImportError:
        return False
    return True


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
    what: str, *, timeout: float, enabled: bool | Progress = True, stream: TextIO | None = None
) -> Progress:
    """The display for one wait: `enabled` itself when it is a `Progress`; a live widget in a
    Jupyter kernel with ipywidgets; rich or plain on an interactive terminal; else nothing."""
    if not isinstance(enabled, bool):
        return enabled
    stream = sys.stderr if stream is None else stream
    if enabled and in_notebook() and _widgets_available():
        shown = NotebookProgress(what)
        importlib.import_module("IPython.display").display(shown.widget)
        return shown
    if not enabled or not interactive(stream):
        return NullProgress()
    if _rich_available():
        return _RichProgress(what, stream, timeout)
    return PlainProgress(what, stream)
