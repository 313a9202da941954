"""Size figures of the generated package, as the acceptance criteria count them."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

_CLASS = re.compile(r"^class (\w+)\(", re.MULTILINE)


@dataclass(frozen=True)
class OutputStats:
    files: int
    classes: int
    class_names: tuple[str, ...]
    code_lines: int  # non-blank, without docstrings and comments
    total_lines: int


def code_lines(source: str) -> int:
    """Non-blank lines that are neither comments nor (module, class or attribute) docstrings."""
    tree = ast.parse(source)
    doc_lines: set[int] = set()
    for node in ast.walk(tree):
        is_string = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if is_string and isinstance(node.value.value, str):  # type: ignore[attr-defined]
            end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
            doc_lines.update(range(node.lineno, end + 1))  # type: ignore[attr-defined]
    count = 0
    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or number in doc_lines:
            continue
        count += 1
    return count


def measure(package: Path) -> OutputStats:
    files = sorted(package.rglob("*.py"))
    names: list[str] = []
    lines = total = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        names += _CLASS.findall(text)
        lines += code_lines(text)
        total += sum(1 for line in text.splitlines() if line.strip())
    return OutputStats(len(files), len(names), tuple(sorted(names)), lines, total)
