"""What the notebook widgets share: loading ipywidgets, the state table, and buttons that ask
before they delete or stop something.

Why: a notebook user clicks; a click that deletes a cluster must not be a slip of the mouse,
and an error in a click handler must show in the panel (Jupyter drops exceptions raised in
widget callbacks into a log nobody reads).
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import flarekit.client

if TYPE_CHECKING:
    from flarekit.client import Client

__all__ = [
    "STATE_COLOURS",
    "Confirmed",
    "ListingPanel",
    "ipywidgets",
    "report_errors",
    "state_table",
]

#: Badge colours per state word (cluster and job states alike); other states are grey.
STATE_COLOURS: Mapping[str, str] = {
    "READY": "#2e7d32",
    "Running": "#2e7d32",
    "Succeeded": "#1565c0",
    "STARTING": "#6a1b9a",
    "Pending": "#6a1b9a",
    "QUEUED": "#ef6c00",
    "SUSPENDED": "#ef6c00",
    "Suspended": "#ef6c00",
    "FAILED": "#c62828",
    "Failed": "#c62828",
    "Stopped": "#616161",
}
_OTHER = "#757575"


def ipywidgets() -> Any:
    """The ipywidgets module, or an ImportError saying which extra brings it."""
    try:
        return importlib.import_module("ipywidgets")
    except ImportError as exc:
        raise ImportError(
            "flarekit's notebook widgets need ipywidgets: pip install 'flarekit[widgets]'"
        ) from exc


def _cell(value: object) -> str:
    return "-" if value is None or value == "" else html.escape(str(value))


def state_table(
    header: Sequence[str], rows: Sequence[Sequence[object]], *, state_column: str, empty: str
) -> str:
    """An HTML table with the state column drawn as a coloured badge; `empty` is shown (in a
    paragraph) when there are no rows. Every text is escaped."""
    if not rows:
        return f'<p class="flarekit-empty">{html.escape(empty)}</p>'
    state_at = list(header).index(state_column)
    cell_style = "padding:2px 10px;border-bottom:1px solid #ddd"
    head = "".join(f'<th style="{cell_style}">{html.escape(h)}</th>' for h in header)
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            text = _cell(value)
            if i == state_at:
                colour = STATE_COLOURS.get(str(value), _OTHER)
                text = (
                    f'<span style="background:{colour};color:#fff;padding:1px 6px;'
                    f'border-radius:3px">{text}</span>'
                )
            cells.append(f'<td style="{cell_style}">{text}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<table class="flarekit-table" style="border-collapse:collapse;text-align:left">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def report_errors(message: Any, action: Callable[[], object]) -> None:
    """Run a click's `action`; an exception shows in the `message` widget instead of being
    lost in the kernel's log."""
    try:
        action()
    except Exception as exc:
        message.value = (
            f'<span style="color:#c62828">{html.escape(type(exc).__name__)}: '
            f"{html.escape(str(exc))}</span>"
        )


class Confirmed:
    """A button that acts on its second click: the first one turns it into "Confirm ...".

    `reset()` (called when the selection changes or the table is refreshed) disarms it, so a
    confirmation never carries over to another row.
    """

    def __init__(self, label: str, act: Callable[[], object], message: Any) -> None:
        self._label = label
        self._act = act
        self._message = message
        self.button: Any = ipywidgets().Button(description=label, button_style="danger")
        self.button.on_click(lambda _button: self._clicked())
        self.armed = False

    def _clicked(self) -> None:
        if not self.armed:
            self.armed = True
            self.button.description = f"Confirm {self._label.lower()}"
            return
        self.reset()
        report_errors(self._message, self._act)

    def reset(self) -> None:
        self.armed = False
        self.button.description = self._label


class ListingPanel:
    """What the cluster and job tables share: a title, the table, a chooser of rows, a
    Refresh button and a message line, over one client and namespace (`ALL_NAMESPACES` for
    all). Subclasses read their rows in `refresh()` and draw them with `_show()`."""

    def __init__(self, namespace: str | None, client: Client | None, chooser: str) -> None:
        w = ipywidgets()
        self._client = client
        self._namespace = namespace
        self.title = w.HTML()
        self.table = w.HTML()
        self.choice = w.Dropdown(description=chooser, options=[])
        self.message = w.HTML()
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.refresh_button.on_click(lambda _b: report_errors(self.message, self.refresh))

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    @property
    def widget(self) -> Any:
        """The ipywidgets box to display."""
        raise NotImplementedError

    def refresh(self) -> None:
        raise NotImplementedError

    def _connection(self) -> flarekit.client.Client:
        if self._client is None:
            self._client = flarekit.client.Client()
        return self._client

    @property
    def namespace(self) -> str:
        """The namespace listed (the client's when none was given)."""
        return self._namespace or self._connection().namespace or "default"

    @property
    def every_namespace(self) -> bool:
        return self.namespace == flarekit.client.ALL_NAMESPACES

    def _show(
        self,
        what: str,
        header: Sequence[str],
        rows: Sequence[Sequence[object]],
        choices: Sequence[tuple[str, object]],
    ) -> None:
        """Draw the title, the table of `what` ("Ray clusters", "jobs") (with a NAMESPACE column for all namespaces: rows then
        start with it) and the chooser, keeping the chosen row when it is still there."""
        where = "all namespaces" if self.every_namespace else f"namespace {self.namespace}"
        header = ("NAMESPACE", *header) if self.every_namespace else tuple(header)
        title = what[:1].upper() + what[1:]
        self.title.value = f"<b>{html.escape(title)} in {html.escape(where)}: {len(rows)}</b>"
        self.table.value = state_table(
            header, rows, state_column="STATE", empty=f"No {what} in {where}."
        )
        previous = self.choice.value
        keys = [key for _label, key in choices]
        self.choice.options = list(choices)
        self.choice.value = previous if previous in keys else (keys[0] if keys else None)
