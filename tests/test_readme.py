"""The README's examples run as written (here, in the development environment; the packaging
tests run the same examples from installed wheels), and every code block is accounted for."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from netns_support import require_namespaces, run_in_namespaces
from readme_examples import MARKERS, NOT_RUN, RUNNERS, code_blocks

README = Path(__file__).resolve().parents[1] / "README.md"


#: The examples on the practice cluster: with Ray installed its Ray clusters are local Ray,
#: which binds beyond loopback, so they run in a network namespace of their own.
PRACTICE = {"facade", "client", "cli", "widgets"}


@pytest.mark.parametrize("example", sorted(set(RUNNERS) - {"controlplane"} - PRACTICE))
def test_the_readme_example_runs(example: str) -> None:
    assert RUNNERS[example](README).startswith(f"{example}: ")


@pytest.mark.parametrize("example", sorted(PRACTICE))
def test_the_readme_example_runs_on_the_practice_cluster(example: str) -> None:
    require_namespaces()
    done = run_in_namespaces(
        [sys.executable, str(Path(__file__).with_name("readme_examples.py")), str(README), example],
        timeout=900,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-6000:]}"
    assert done.stdout.rstrip().splitlines()[-1].startswith(f"{example}: "), done.stdout


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
