"""In CI (`CI=true`) a skipped test fails, unless its skip is on the reviewed allow-list.

Why: a skip says "this was not tested". On a developer's machine that is often right (no Go,
no chromium, no root); in CI, where everything is installed, a skip is a test that passed
without testing: a missing tool, a sample folder that moved, a parameter list that came out
empty. So under `CI=true` every skip, at collection or in a test, is turned into a failure
naming its reason, unless `ci_skips.toml` (beside this file) lists it: the test's node id
(``*`` matches any run of characters), words of the skip's reason, and why skipping it in CI
is right. Adding an entry is a reviewed change like any other. Tests marked ``xfail`` are
not skips and are left alone.

`tests/conftest.py` imports the two hooks below, which makes them the suite's.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: The allow-list; a test of this module points it elsewhere.
ALLOW_LIST = Path(__file__).with_name("ci_skips.toml")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class AllowedSkip:
    test: str
    reason: str
    why: str

    def matches(self, nodeid: str, reason: str) -> bool:
        # Only `*` is special: node ids hold brackets, which fnmatch would take for sets.
        pattern = ".*".join(re.escape(part) for part in self.test.split("*"))
        return re.fullmatch(pattern, nodeid) is not None and self.reason in reason


def allowed_skips(path: Path | None = None) -> list[AllowedSkip]:
    """The entries of the allow-list; each must say which test, which reason and why."""
    path = path or ALLOW_LIST
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = []
    for index, entry in enumerate(document.get("skip", [])):
        missing = [key for key in ("test", "reason", "why") if not str(entry.get(key, "")).strip()]
        if missing:
            raise ValueError(f"{path}: skip entry {index + 1} lacks {', '.join(missing)}")
        entries.append(AllowedSkip(entry["test"], entry["reason"], entry["why"]))
    return entries


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr: Any = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _enforce(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not in_ci() or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = skip_reason(report)
    if any(entry.matches(report.nodeid, reason) for entry in allowed_skips()):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"CI=true: skipped ({reason}), and this skip is not on the allow-list "
        f"{ALLOW_LIST.name}: in CI a skipped test is a test that did not run. Install what it "
        f"needs, or add a reviewed entry saying why skipping it in CI is right."
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    _enforce(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    outcome = yield
    _enforce(outcome.get_result())
