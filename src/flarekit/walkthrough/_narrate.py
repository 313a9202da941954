"""How the walkthrough talks: numbered steps, plain sentences, and the code that does each.

Why a class of its own: every step prints the same three kinds of thing (a numbered title,
an explanation, the Python a user would type), and keeping the layout in one place keeps
the steps readable and the output consistent.
"""

from __future__ import annotations

import sys
import textwrap
from typing import TextIO

__all__ = ["Narrator"]

_INDENT = "   "


class Narrator:
    """Prints to `out` (stdout by default), numbering steps from 1."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.steps = 0

    def _print(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def title(self, text: str) -> None:
        """The walkthrough's heading."""
        self._print(text)
        self._print("=" * len(text))

    def step(self, title: str) -> None:
        """Start the next numbered step."""
        self.steps += 1
        self._print()
        self._print(f"{self.steps}. {title}")

    def say(self, text: str) -> None:
        """A sentence or two of explanation, wrapped and indented."""
        for line in textwrap.wrap(text, width=88 - len(_INDENT)):
            self._print(_INDENT + line)

    def code(self, text: str) -> None:
        """Python the user would write for this step."""
        depth = 0
        for line in textwrap.dedent(text).strip("\n").splitlines():
            self._print(f"{_INDENT}{'...' if depth > 0 else '>>>'} {line}")
            depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")

    def show(self, text: object) -> None:
        """A result (a status table, logs), indented under the step."""
        for line in str(text).rstrip("\n").splitlines():
            self._print(_INDENT + "  " + line)

    def done(self, text: str) -> None:
        """A one-line outcome."""
        self._print(f"{_INDENT}-> {text}")
