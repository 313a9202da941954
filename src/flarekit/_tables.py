"""Small tables for people: aligned text for terminals, compact HTML for Jupyter.

Statuses, details and listings are shown in two places: `print()` in a terminal and the last
expression of a notebook cell. Both get the same rows from one place, so the text and the HTML
never disagree. Everything that reaches HTML is escaped: names, messages and reasons come from
the server and may hold `<`, `&` or quotes.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Age", "HtmlStatus", "Row", "age", "html_table", "text_table"]

Row = Sequence[object]


def age(seconds: float) -> str:
    """How long ago, as kubectl's AGE column says it: ``45s``, ``3m20s``, ``5h2m``, ``12d``."""
    total = max(int(seconds), 0)
    minutes, secs = divmod(total, 60)
    hours, mins = divmod(minutes, 60)
    days, hrs = divmod(hours, 24)
    if total < 120:
        return f"{total}s"
    if minutes < 10:
        return f"{minutes}m{secs}s" if secs else f"{minutes}m"
    if hours < 3:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{mins}m" if mins else f"{hours}h"
    if days < 2:
        return f"{hours}h"
    if days < 8:
        return f"{days}d{hrs}h" if hrs else f"{days}d"
    return f"{days}d" if days < 365 * 2 else f"{days // 365}y"


@dataclass(frozen=True)
class Age:
    """An AGE cell: equal while the object's creation time (the server's RFC 3339 string) is,
    shown as the time since then at the moment it is printed, so a watched listing reprints a
    row when the object changes, not because a second passed."""

    created: str | None

    def __str__(self) -> str:
        try:
            created = dt.datetime.fromisoformat(self.created or "")
        except ValueError:
            return "-"
        if created.tzinfo is None:
            created = created.replace(tzinfo=dt.UTC)
        return age((dt.datetime.now(dt.UTC) - created).total_seconds())


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def text_table(rows: Sequence[Row], *, header: Row | None = None, title: str | None = None) -> str:
    """Columns padded to their widest cell; `None` shows as `-`, booleans as yes/no."""
    cells = [[_cell(v) for v in row] for row in ([header] if header is not None else []) + [*rows]]
    width = max((len(row) for row in cells), default=0)
    cells = [row + [""] * (width - len(row)) for row in cells]
    widths = [max(len(row[i]) for row in cells) for i in range(width)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    if header is not None and lines:
        lines.insert(1, "  ".join("-" * w for w in widths))
    if title:
        lines.insert(0, title)
    return "\n".join(lines)


def html_table(rows: Sequence[Row], *, header: Row | None = None, title: str | None = None) -> str:
    """A compact `<table>` with every text escaped; the title becomes its caption."""
    parts = ['<table style="border-collapse:collapse;text-align:left">']
    if title:
        parts.append(f'<caption style="text-align:left"><b>{html.escape(title)}</b></caption>')
    if header is not None:
        head = "".join(f"<th>{html.escape(_cell(v))}</th>" for v in header)
        parts.append(f"<thead><tr>{head}</tr></thead>")
    parts.append("<tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


class HtmlStatus:
    """Mixin: define `_status_rows()` (label/value pairs) and get `_repr_html_` and `as_table()`.

    Jupyter calls `_repr_html_` to show the object as the result of a cell; `as_table()` is the
    same content as text for `__str__` in a terminal. `_status_title()` names the object.
    """

    def _status_title(self) -> str:
        return type(self).__name__

    def _status_rows(self) -> Sequence[tuple[str, object]]:
        raise NotImplementedError(f"{type(self).__name__} must define _status_rows()")

    def as_table(self) -> str:
        """The status as aligned `label  value` lines under a title."""
        return text_table(list(self._status_rows()), title=self._status_title())

    def _repr_html_(self) -> str:
        return html_table(list(self._status_rows()), title=self._status_title())
