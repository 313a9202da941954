"""The pytest plugin fails the test during which a simulated operator raised, with the
operator's traceback, whichever FakeCluster it ran on and however the test got that cluster;
a test marked ``simulated_operator_errors_allowed`` is let be; the loop itself goes on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SUITE = {
    "conftest.py": """
from flarekit_testing.pytest_plugin import (
    fake_cluster, pytest_configure, simulated_operators_raised_nothing,
)
""",
    "test_operators.py": """
import threading

import pytest

from flarekit_testing import FakeCluster

class Broken:
    def __init__(self):
        self.seen = threading.Event()

    def on_event(self, cluster, event):
        if event.key[1] == "namespaces" and event.key[3].startswith("boom"):
            self.seen.set()
            raise ValueError("the simulated operator broke on " + event.key[3])

    def on_tick(self, cluster):
        pass

@pytest.fixture(scope="module")
def shared():
    with FakeCluster(crds=[], controllers=[Broken()]) as fc:
        yield fc

def _namespace(fc, name):
    fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

def test_operator_raises_on_a_shared_cluster(shared):
    _namespace(shared, "boom-shared")  # the test ends before the operator has looked

def test_after_it_nothing_is_left_over(shared):
    _namespace(shared, "calm")

def test_operator_raises_on_a_cluster_of_its_own():
    with FakeCluster(crds=[], controllers=[Broken()]) as fc:
        _namespace(fc, "boom-own")
        fc.settle_controllers()

@pytest.mark.simulated_operator_errors_allowed
def test_breaking_it_on_purpose(shared):
    _namespace(shared, "boom-allowed")
    shared.settle_controllers()
    assert len(shared.controller_errors) == 2  # and the loop went on after the first

def test_no_operator_at_all(fake_cluster):
    _namespace(fake_cluster, "boom-nobody")
""",
}


def test_a_test_during_which_an_operator_raised_fails(tmp_path: Path) -> None:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "."],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    outcomes = {}
    for line in done.stdout.splitlines():
        for outcome in ("PASSED", "FAILED", "ERROR"):
            if f" {outcome}" in line and "::" in line:
                outcomes[line.split("::")[1].split()[0]] = outcome  # the last: teardown
    assert outcomes == {
        "test_operator_raises_on_a_shared_cluster": "ERROR",  # in its teardown
        "test_after_it_nothing_is_left_over": "PASSED",
        "test_operator_raises_on_a_cluster_of_its_own": "ERROR",
        "test_breaking_it_on_purpose": "PASSED",
        "test_no_operator_at_all": "PASSED",
    }, done.stdout
    assert "a simulated operator raised while this test ran" in done.stdout
    assert "ValueError: the simulated operator broke on boom-shared" in done.stdout
    assert "Broken on the FakeCluster at https://127.0.0.1:" in done.stdout
