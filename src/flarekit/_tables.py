"""Small tables for people: aligned text for terminals, compact HTML for Jupyter.

Statuses, details and listings are shown in two places: `print()` in a terminal and the last
expression of a notebook cell. Both get the same rows from one place, so the text and the HTML
never disagree. Everything that reaches HTML is escaped: names, messages and reasons come from
the server and may hold `<`, `&` or quotes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

__all__ = ["HtmlStatus", "Row", "html_table", "text_table"]

Row = Sequence[object]


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
