"""How typed the facade is: string-keyed dict lookups and `Any` per 100 lines of flarekit.

Counted on Python tokens (comments and strings never count), over every ``.py`` file of
``src/flarekit`` except ``flarekit/testing`` (the emulator, whose job is JSON):

- ``.get("...")``: a ``.get(`` call whose first argument is a string literal;
- ``["..."]``: a subscript by a string literal (``obj["spec"]``), not a list literal;
- ``Any``: the name ``Any`` anywhere in code (annotations, casts, imports).

``python -m benchmarks.bench_typed PATH...`` counts other trees the same way (another
library, for comparison).
"""

from __future__ import annotations

import io
import sys
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

FACADE = Path(__file__).resolve().parent.parent / "src" / "flarekit"
EXCLUDED = ("testing",)


@dataclass
class Counts:
    files: int = 0
    lines: int = 0
    get_calls: int = 0
    subscripts: int = 0
    any_names: int = 0

    def per_100(self, value: int) -> float:
        return 100 * value / self.lines if self.lines else 0.0


def count_source(text: str, counts: Counts) -> None:
    counts.files += 1
    counts.lines += len(text.splitlines())
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(text).readline)
        if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
    ]
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.NAME and tok.string == "Any":
            counts.any_names += 1
        if (
            tok.type == tokenize.NAME
            and tok.string == "get"
            and i >= 1
            and tokens[i - 1].string == "."
            and i + 2 < len(tokens)
            and tokens[i + 1].string == "("
            and tokens[i + 2].type == tokenize.STRING
        ):
            counts.get_calls += 1
        if (
            tok.string == "["
            and i >= 1
            and (tokens[i - 1].type == tokenize.NAME or tokens[i - 1].string in (")", "]"))
            and tokens[i - 1].string not in ("in", "return", "yield", "else", "and", "or", "not")
            and i + 2 < len(tokens)
            and tokens[i + 1].type == tokenize.STRING
            and tokens[i + 2].string == "]"
        ):
            counts.subscripts += 1


def count_tree(root: Path, excluded: Sequence[str] = ()) -> Counts:
    counts = Counts()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).parts
        if relative[0] in excluded:
            continue
        count_source(path.read_text(encoding="utf-8"), counts)
    return counts


def rows(name: str, counts: Counts) -> Iterable[tuple[str, str]]:
    yield f"{name}: files / lines", f"{counts.files} / {counts.lines}"
    yield f'{name}: .get("...") calls', f"{counts.get_calls} ({counts.per_100(counts.get_calls):.2f} per 100 lines)"
    yield f'{name}: ["..."] subscripts', f"{counts.subscripts} ({counts.per_100(counts.subscripts):.2f} per 100 lines)"
    yield f"{name}: Any", f"{counts.any_names} ({counts.per_100(counts.any_names):.2f} per 100 lines)"


def main(argv: Sequence[str] = ()) -> list[tuple[str, str]]:
    out = list(rows("flarekit facade", count_tree(FACADE, EXCLUDED)))
    for extra in argv:
        out += rows(extra, count_tree(Path(extra)))
    return out


if __name__ == "__main__":
    for measurement, result in main(sys.argv[1:]):
        print(f"{measurement:45} {result}")
