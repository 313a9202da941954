"""The README's examples run as written (here, in the development environment; the packaging
tests run the same examples from installed wheels), and every code block is accounted for."""

from __future__ import annotations

from pathlib import Path

import pytest

from readme_examples import MARKERS, NOT_RUN, RUNNERS, code_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("example", sorted(set(RUNNERS) - {"controlplane"}))
def test_the_readme_example_runs(example: str) -> None:
    assert RUNNERS[example](README).startswith(f"{example}: ")


def test_the_readme_control_plane_example_runs(
    controlplane_binaries: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAREKIT_CONTROLPLANE_ASSETS", str(controlplane_binaries))
    assert RUNNERS["controlplane"](README).startswith("controlplane: ")


def test_every_readme_block_is_run_or_says_why_not() -> None:
    for text in code_blocks(README):
        run = [name for name, marker in MARKERS.items() if marker in text]
        skipped = [marker for marker in NOT_RUN if marker in text]
        assert len(run) + len(skipped) == 1, f"README block not accounted for:\n{text}"
    assert sorted(MARKERS) == sorted(RUNNERS)
