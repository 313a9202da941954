"""The README's examples run as written (here, in the development environment; the packaging
tests run the same examples from installed wheels)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readme_examples import RUNNERS

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("example", sorted(RUNNERS))
def test_the_readme_example_runs(example: str) -> None:
    assert RUNNERS[example](README).startswith(f"{example}: ")
