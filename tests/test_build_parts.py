"""The suite's two parts (tests/build_parts.py): every test in exactly one, chosen by what it
uses; a test that reaches a built program unseen fails in the first part instead of skipping."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent

SUITE = {
    "conftest.py": f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import pytest
from build_parts import after_builds, pytest_addoption, pytest_collection_modifyitems

@pytest.fixture(scope="session")
def controlplane_binaries(request):
    after_builds(request, "the control plane's programs")
    return "bin"

@pytest.fixture(scope="session")
def control_plane(controlplane_binaries):
    return "plane"

@pytest.fixture(scope="session")
def real_node_ready(request):
    after_builds(request, "the real node")

@pytest.fixture(scope="session")
def operator_builds(request):
    after_builds(request, "the operators' builds")
    return {{}}
""",
    "test_suite.py": """
import pytest

def test_plain():
    pass

def test_uses_the_plane(control_plane):
    pass

@pytest.fixture
def on_a_node(real_node_ready):
    return 1

def test_through_another_fixture(on_a_node):
    pass

def test_reads_the_operator_builds(operator_builds):
    pass

@pytest.fixture(params=["fake", "real"])
def server(request):
    if request.param == "real":
        return request.getfixturevalue("control_plane")
    return "fake"

def test_both_servers(server):
    pass

@pytest.fixture(scope="module", params=["fakecluster", "controlplane"])
def backend(request):
    if request.param == "controlplane":
        return request.getfixturevalue("controlplane_binaries")
    return "fake"

def test_both_backends(backend):
    pass

@pytest.fixture
def live_or_recorded(request):
    return request.getfixturevalue("control_plane")

def test_by_name_in_a_fixture(live_or_recorded):
    pass

@pytest.mark.parametrize("mode", ["real", "fake"])
def test_a_parameter_that_is_no_fixture(mode):
    pass

def test_unseen(request):
    name = "control" + "_plane"
    request.getfixturevalue(name)
""",
}

BEFORE = {
    "test_plain",
    "test_both_servers[fake]",
    "test_both_backends[fakecluster]",
    "test_a_parameter_that_is_no_fixture[real]",
    "test_a_parameter_that_is_no_fixture[fake]",
    "test_unseen",
}
AFTER = {
    "test_uses_the_plane",
    "test_through_another_fixture",
    "test_reads_the_operator_builds",
    "test_both_servers[real]",
    "test_both_backends[controlplane]",
    "test_by_name_in_a_fixture",
}


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _collected(folder: Path, part: str) -> set[str]:
    done = _pytest(folder, "--collect-only", "-q", f"--part={part}")
    assert done.returncode == 0, done.stdout + done.stderr
    return {line.split("::", 1)[1] for line in done.stdout.splitlines() if "::" in line}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return tmp_path


def test_each_test_is_in_exactly_one_part_by_what_it_uses(suite: Path) -> None:
    before = _collected(suite, "before-builds")
    after = _collected(suite, "after-builds")
    assert before == BEFORE
    assert after == AFTER
    assert _collected(suite, "all") == before | after


def test_a_test_that_reaches_a_built_program_unseen_fails_in_the_first_part(suite: Path) -> None:
    done = _pytest(suite, "--part=before-builds")
    assert done.returncode == 1, done.stdout
    assert "FAILED test_suite.py::test_unseen" in done.stdout
    assert "needs the control plane's programs" in done.stdout
    assert "tests/build_parts.py does not see how it reaches them" in done.stdout
    assert f"{len(BEFORE) - 1} passed" in done.stdout
    assert "skipped" not in done.stdout


def test_the_second_part_and_the_whole_suite_run_it(suite: Path) -> None:
    after = _pytest(suite, "--part=after-builds")
    assert after.returncode == 0 and f"{len(AFTER)} passed" in after.stdout, after.stdout
    whole = _pytest(suite)
    assert whole.returncode == 0 and f"{len(BEFORE | AFTER)} passed" in whole.stdout, whole.stdout
