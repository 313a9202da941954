"""The cluster table as a browser paints it: Debian's chromium, headless, loads the table's
HTML from a file and takes a screenshot; the picture must show every cell of the table.

The page tells where each cell's text is (the DOM's layout); the screenshot must have ink
exactly there (text as wide as its layout says), each state badge in its state's colour, and
nothing below the table. The same checks on a screenshot with the table hidden must find
every cell missing, so they cannot pass on a picture that does not show the table.
`make browser` (part of `make test`) installs chromium; CI runs this test, elsewhere it is
skipped with that hint when chromium is missing.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from headless_browser import CHROMIUM, headless_chromium, page_file
from PIL import Image
from test_widgets import table_rows
from widget_support import three_clusters

from flarekit import Client
from flarekit.widgets import ClusterTable
from flarekit.widgets._common import STATE_COLOURS

if not os.access(CHROMIUM, os.X_OK) and not os.environ.get("CI"):
    pytest.skip("chromium is not installed: `make browser` installs it", allow_module_level=True)

Box = tuple[int, int, int, int]
HEADER = ["NAME", "STATE", "WORKERS", "QUEUE", "APPWRAPPER", "REASON"]

# Where the table's cells and their text are, as the page laid them out.
_LAYOUT = """(() => {
  const box = r => [Math.round(r.left), Math.round(r.top), Math.round(r.right),
                    Math.round(r.bottom)];
  const textBox = el => { const range = document.createRange(); range.selectNodeContents(el);
                          return box(range.getBoundingClientRect()); };
  const table = document.querySelector("table.flarekit-table");
  const rows = [...table.querySelectorAll("tr")].map(tr => [...tr.children].map(cell => {
    const badge = cell.querySelector("span");
    return {text: cell.innerText, cell: box(cell.getBoundingClientRect()), ink: textBox(cell),
            badge: badge ? box(badge.getBoundingClientRect()) : null};
  }));
  return {rows, table: box(table.getBoundingClientRect())};
})()"""

# A pixel is ink when it is clearly darker than the white page; a badge pixel is within this
# distance of the badge colour (anti-aliasing softens only the edges).
_INK_BELOW = 160
_COLOUR_TOLERANCE = 12
_EDGE = 3  # how far the glyphs' ink may sit inside or outside the text's layout box


@dataclass(frozen=True)
class Cell:
    text: str
    box: Box
    ink: Box
    badge: Box | None


def _cells(layout: dict[str, Any]) -> list[list[Cell]]:
    return [
        [
            Cell(
                c["text"],
                tuple(c["cell"]),
                tuple(c["ink"]),
                tuple(c["badge"]) if c["badge"] else None,
            )
            for c in row
        ]
        for row in layout["rows"]
    ]


def _ink_extent(picture: Image.Image, box: Box) -> Box | None:
    """The bounding box of the dark pixels inside `box`, or None when there are none."""
    region = picture.crop(box).convert("L").point(lambda v: 255 if v < _INK_BELOW else 0)
    found = region.getbbox()
    if found is None:
        return None
    return (box[0] + found[0], box[1] + found[1], box[0] + found[2], box[1] + found[3])


def _hex(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def _share_of_colour(picture: Image.Image, box: Box, colour: tuple[int, int, int]) -> float:
    data = picture.crop(box).tobytes()  # RGB, three bytes a pixel
    pixels = list(zip(data[0::3], data[1::3], data[2::3], strict=True))
    close = sum(
        1
        for p in pixels
        if max(abs(a - b) for a, b in zip(p, colour, strict=True)) <= _COLOUR_TOLERANCE
    )
    return close / max(len(pixels), 1)


def drawn_problems(picture: Image.Image, cells: list[list[Cell]], table: Box) -> list[str]:
    """What the picture fails to show of the table laid out as `cells` (empty: all shown)."""
    problems: list[str] = []
    for cell in (c for row in cells for c in row):
        if cell.badge is not None:
            colour = STATE_COLOURS[cell.text]
            share = _share_of_colour(picture, cell.badge, _hex(colour))
            if share < 0.5:
                problems.append(f"badge {cell.text!r} at {cell.badge}: {share:.0%} of it {colour}")
            continue
        ink = _ink_extent(picture, cell.box)
        if ink is None:
            problems.append(f"no text drawn for {cell.text!r} at {cell.box}")
            continue
        if abs(ink[0] - cell.ink[0]) > _EDGE or abs(ink[2] - cell.ink[2]) > _EDGE:
            problems.append(
                f"{cell.text!r}: text drawn over {ink[0]}..{ink[2]}, laid out over "
                f"{cell.ink[0]}..{cell.ink[2]}"
            )
    below = (table[0], table[3] + 2, table[2], table[3] + 60)
    if _ink_extent(picture, below) is not None:
        problems.append(f"something is drawn below the table, in {below}")
    return problems


def test_the_browser_shows_the_cluster_table(
    client: Client, namespace: str, tmp_path: Path
) -> None:
    expected = three_clusters(client, namespace)
    table = ClusterTable(namespace, client=client)
    url = page_file(tmp_path, table.title.value + table.table.value)
    with headless_chromium() as browser:
        session = browser.open_page(url)
        layout = browser.evaluate(session, _LAYOUT)
        shown = browser.screenshot(session)
        browser.evaluate(session, 'document.querySelector("table").style.visibility = "hidden"')
        hidden = browser.screenshot(session)
    (tmp_path / "cluster-table.png").write_bytes(shown)
    cells = _cells(layout)

    # The page holds the table of the widget: the header, then one row per cluster.
    assert [c.text for c in cells[0]] == HEADER
    assert [[c.text for c in row] for row in cells[1:]] == table_rows(table.table.value)
    assert [(row[0].text, row[1].text) for row in cells[1:]] == [
        (name, state.value) for name, state in sorted(expected.items())
    ]
    # The picture shows every cell where the page laid it out, badges in their colours.
    picture = Image.open(io.BytesIO(shown)).convert("RGB")
    assert drawn_problems(picture, cells, tuple(layout["table"])) == []
    # And the same checks see a picture without the table for what it is.
    blank = Image.open(io.BytesIO(hidden)).convert("RGB")
    missing = drawn_problems(blank, cells, tuple(layout["table"]))
    assert len(missing) == sum(len(row) for row in cells)
