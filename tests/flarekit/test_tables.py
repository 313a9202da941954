"""Text and HTML tables: aligned, escaped, sharing the same rows."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from flarekit._tables import HtmlStatus, html_table, text_table


def test_text_table_aligns_and_marks_missing_values() -> None:
    out = text_table([("a", 1, None), ("long-name", True, "x")], header=("NAME", "N", "Q"))
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "N", "Q"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[2].split() == ["a", "1", "-"]
    assert lines[3].split() == ["long-name", "yes", "x"]
    assert lines[2].index("1") == lines[3].index("yes")


def test_html_table_escapes_all_text() -> None:
    out = html_table([("<b>", 'a"&')], header=("<h>",), title="t<i>")
    assert "<b>" not in out.replace("<b>t", "")  # only our own caption markup
    assert "&lt;b&gt;" in out and "a&quot;&amp;" in out and "&lt;h&gt;" in out
    assert "t&lt;i&gt;" in out


class Status(HtmlStatus):
    def _status_title(self) -> str:
        return "RayCluster <x>"

    def _status_rows(self) -> Sequence[tuple[str, object]]:
        return [("state", "READY"), ("message", "<script>")]


def test_html_status_mixin_renders_both_ways() -> None:
    status = Status()
    assert "&lt;script&gt;" in status._repr_html_()
    assert "<script>" not in status._repr_html_()
    text = status.as_table()
    assert text.splitlines()[0] == "RayCluster <x>"
    assert "state    READY" in text


def test_html_status_without_rows_says_what_is_missing() -> None:
    with pytest.raises(NotImplementedError, match="_status_rows"):
        HtmlStatus()._repr_html_()
