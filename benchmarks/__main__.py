"""Run every ``benchmarks/bench_*.py`` module's ``main()`` and print its rows as a table.

A row is a dict (its keys are the column names) or a tuple of cells (``measurement, result``).
``python -m benchmarks list`` runs only the modules whose name contains ``list``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Row = dict[str, str]


def _as_dict(row: Mapping[str, Any] | Sequence[Any]) -> Row:
    if isinstance(row, Mapping):
        return {str(k): str(v) for k, v in row.items()}
    names = ["measurement", "result", *(f"column {i}" for i in range(3, len(row) + 1))]
    return {name: str(cell) for name, cell in zip(names, row, strict=False)}


def table(raw_rows: Sequence[Mapping[str, Any] | Sequence[Any]]) -> str:
    rows = [_as_dict(r) for r in raw_rows]
    if not rows:
        return "(no results)"
    columns = list(rows[0])
    widths = [max(len(c), *(len(r.get(c, "")) for r in rows)) for c in columns]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    body = [line([r.get(c, "") for c in columns]) for r in rows]
    return "\n".join([line(columns), line(["-" * w for w in widths]), *body])


def main(argv: Sequence[str] = ()) -> int:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    chosen = [n for n in names if not argv or any(a in n for a in argv)]
    for name in chosen:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"== {name}: {(module.__doc__ or '').strip().splitlines()[0]}", flush=True)
        print(table(module.main()), end="\n\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
