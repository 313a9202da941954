"""Under `CI=true` a skip fails the run unless `ci_skips.toml` lists it (with why); outside CI
skips stay skips. `.ci/run` always sets `CI=true`, whatever the runner exported."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ci_skips import allowed_skips

HERE = Path(__file__).parent
REPO = HERE.parent
#: A skip at collection is a collection error, which stops a run; go on, to see the rest.
CONTINUE = ("--continue-on-collection-errors",)

SUITE = {
    "conftest.py": f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(HERE)!r})
import ci_skips
ci_skips.ALLOW_LIST = Path(__file__).with_name("allowed.toml")
from ci_skips import pytest_make_collect_report, pytest_runtest_makereport
""",
    "allowed.toml": """
[[skip]]
test = "test_tests.py::test_listed[*]"
reason = "a listed reason"
why = "the test of the allow-list needs one"
""",
    "test_tests.py": """
import pytest

def test_unlisted():
    pytest.skip("no tool here")

@pytest.mark.parametrize("n", [1, 2])
def test_listed(n):
    pytest.skip("for a listed reason")

def test_listed_but_another_reason():
    pytest.skip("something else")

@pytest.mark.skipif(True, reason="a marker")
def test_marked():
    pass

@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False

@pytest.mark.parametrize("sample", [])
def test_over_nothing(sample):
    pass

def test_passes():
    pass
""",
    "test_module_skipped.py": """
import pytest
pytest.skip("the whole module", allow_module_level=True)
""",
}


def _run(tmp_path: Path, ci: str | None) -> tuple[int, dict[str, str]]:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-rE", "-p", "no:cacheprovider", *CONTINUE, "."],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    outcomes = {}
    for line in done.stdout.splitlines():
        each = re.match(r"\S+::(\S+) (PASSED|FAILED|SKIPPED|XFAIL|ERROR)", line)
        collected = re.match(r"ERROR (\S+\.py) - ", line)
        if each:
            outcomes.setdefault(each.group(1), each.group(2))  # a failed setup: ERROR first
        elif collected:
            outcomes[collected.group(1)] = "ERROR"
    return done.returncode, outcomes


def test_in_ci_only_listed_skips_skip(tmp_path: Path) -> None:
    code, outcomes = _run(tmp_path, "true")
    assert code == 1
    assert outcomes["test_unlisted"] == "FAILED"
    assert outcomes["test_listed[1]"] == outcomes["test_listed[2]"] == "SKIPPED"
    assert outcomes["test_listed_but_another_reason"] == "FAILED"
    assert outcomes["test_marked"] == "ERROR"  # skipped in its setup, which now fails
    assert outcomes["test_over_nothing[NOTSET]"] == "ERROR"  # an empty parameter set
    assert outcomes["test_expected_to_fail"] == "XFAIL"
    assert outcomes["test_passes"] == "PASSED"
    assert outcomes["test_module_skipped.py"] == "ERROR"  # skipped at collection


def test_outside_ci_skips_are_skips(tmp_path: Path) -> None:
    code, outcomes = _run(tmp_path, "false")
    assert code == 0
    assert outcomes["test_unlisted"] == "SKIPPED"
    assert outcomes["test_marked"] == "SKIPPED"


def test_every_entry_of_the_allow_list_says_which_test_reason_and_why() -> None:
    entries = allowed_skips()
    assert entries
    for entry in entries:
        assert entry.test.startswith("tests/") and "::" in entry.test
        path = REPO / entry.test.split("::", 1)[0]
        assert path.is_file(), f"{entry.test}: no such test file"
        assert entry.reason in path.read_text(), f"{entry.test}: no skip says {entry.reason!r}"


@pytest.mark.parametrize("runner", [None, "false", "0", "true"])
def test_ci_run_always_sets_ci(tmp_path: Path, runner: str | None) -> None:
    """`.ci/run` with `make` replaced by one that reports the CI it was given."""
    (tmp_path / "make").write_text('#!/bin/sh\necho "CI=$CI"\n')
    (tmp_path / "make").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = f"{tmp_path}{os.pathsep}{env.get('PATH', '')}"
    if runner is not None:
        env["CI"] = runner
    done = subprocess.run(
        [str(REPO / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "CI=true"
