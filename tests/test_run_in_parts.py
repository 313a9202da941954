"""`make test`'s order (tests/run_in_parts.py), with `make` replaced by a script that plays each
step: the builds beside the set-up, checks and first part; the second part after them; a
failing step fails the run with its output shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent

#: Plays `make --no-print-directory <target>`: prints, sleeps, exits as the plan file says,
#: and records when each target started and ended.
FAKE_MAKE = """#!{python}
import json, os, sys, time
target = sys.argv[-1]
plan = json.load(open(os.environ["FAKE_PLAN"]))
step = plan.get(target, {{}})
trace = open(os.environ["FAKE_TRACE"], "a")
trace.write(f"start {{target}}\\n"); trace.flush()
for line in step.get("out", [target + " says hello"]):
    print(line, flush=True)
time.sleep(step.get("sleep", 0))
# "until": wait (a minute at most) for another target to start, then go on.
deadline = time.monotonic() + 60
while step.get("until") and f"start {{step['until']}}" not in open(os.environ["FAKE_TRACE"]).read():
    if time.monotonic() > deadline:
        sys.exit(3)
    time.sleep(0.05)
trace.write(f"end {{target}}\\n"); trace.flush()
sys.exit(step.get("code", 0))
"""

BUILD_OUTPUT = [
    "Go modules under controlplane/ (go1.26.8):",
    "  controlplane: 0% (1 packages compiled)",
    "  controlplane: 50% (900 packages compiled)",
    "  controlplane: built in 512 s -> /cache/go/controlplane-1234",
    "control plane and operators ready in 600 s",
]


def _run(tmp_path: Path, plan: dict[str, dict[str, object]]) -> tuple[int, str, list[str]]:
    make = tmp_path / "make"
    make.write_text(FAKE_MAKE.format(python=sys.executable))
    make.chmod(0o755)
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    trace = tmp_path / "trace"
    trace.touch()
    env = dict(os.environ, MAKE=str(make), FAKE_PLAN=str(tmp_path / "plan.json"))
    env["FAKE_TRACE"] = str(trace)
    done = subprocess.run(
        [sys.executable, str(HERE / "run_in_parts.py"), "--logs", str(tmp_path / "logs")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr, trace.read_text().splitlines()


def test_the_builds_run_beside_the_first_part_and_before_the_second(tmp_path: Path) -> None:
    plan = {"test-builds": {"until": "test-before-builds", "out": BUILD_OUTPUT}}
    code, out, trace = _run(tmp_path, plan)
    assert code == 0, out
    assert out.index("==> builds:") < out.index("==> set-up:")
    # The set-up, images, checks and first part start while the builds run.
    assert trace.index("start test-before-builds") < trace.index("end test-builds")
    assert trace.index("end test-setup") < trace.index("start node-images")
    assert trace.index("end test-builds") < trace.index("start test-after-builds")
    assert trace.index("end node-images") < trace.index("start test-after-builds")
    # Foreground output is shown as it comes; the builds' log is summarised.
    assert "test-before-builds says hello" in out
    assert "controlplane: built in 512 s" in out and "50%" not in out
    assert (tmp_path / "logs" / "builds.log").read_text().count("%") == 2
    for step in ("builds", "set-up", "images", "lint and typecheck", "tests after the builds"):
        assert f"    {step:<24}" in out and "ok" in out.split(f"    {step:<24}")[1].splitlines()[0]


def test_a_failed_build_shows_its_log_and_the_second_part_does_not_run(tmp_path: Path) -> None:
    plan = {"test-builds": {"code": 1, "out": [*BUILD_OUTPUT[:3], "kube-apiserver: link failed"]}}
    code, out, trace = _run(tmp_path, plan)
    assert code == 1
    assert "==> builds failed (exit 1); its log:" in out
    assert "50% (900 packages compiled)" in out and "link failed" in out
    assert "start test-after-builds" not in trace
    assert "make test failed: builds" in out


def test_a_build_failing_during_the_first_part_stops_it_at_once(tmp_path: Path) -> None:
    plan = {
        "test-builds": {"until": "test-before-builds", "code": 1, "out": ["go: link failed"]},
        "test-before-builds": {"sleep": 60},
    }
    code, out, trace = _run(tmp_path, plan)
    assert code == 1
    assert "==> builds failed (exit 1); its log:" in out and "go: link failed" in out
    assert "end test-before-builds" not in trace  # stopped, not waited for
    assert "start test-after-builds" not in trace
    assert "stopped" in out.split("    tests before the builds")[1].splitlines()[0]
    assert "make test failed: builds" in out


def test_a_failed_check_stops_the_builds_at_once(tmp_path: Path) -> None:
    plan = {"test-builds": {"sleep": 60}, "test-checks": {"code": 2, "out": ["E501 too long"]}}
    code, out, trace = _run(tmp_path, plan)
    assert code == 1 and "E501 too long" in out
    assert "end test-builds" not in trace  # stopped, not waited for
    assert "start test-before-builds" not in trace and "start test-after-builds" not in trace
    assert "make test failed: lint and typecheck" in out
    assert "stopped" in out.split("    builds")[1].splitlines()[0]


def test_a_failed_image_build_shows_its_log_and_the_second_part_does_not_run(
    tmp_path: Path,
) -> None:
    plan = {"node-images": {"code": 2, "out": ["mmdebstrap: E: cannot download apt lists"]}}
    code, out, trace = _run(tmp_path, plan)
    assert code == 1
    assert "==> images failed (exit 2); its log:" in out and "cannot download" in out
    assert "start test-after-builds" not in trace
    assert "make test failed: images" in out


# pytest's exit code 5 (no test collected) fails a part as any other non-zero code does.
@pytest.mark.parametrize("exit_code", [1, 5])
@pytest.mark.parametrize("failing", ["test-before-builds", "test-after-builds"])
def test_a_failing_part_fails_the_run_and_both_parts_run(
    tmp_path: Path, failing: str, exit_code: int
) -> None:
    code, out, trace = _run(tmp_path, {failing: {"code": exit_code, "out": ["1 failed"]}})
    assert code == 1 and "1 failed" in out
    assert f"FAILED (exit {exit_code})" in out
    assert "start test-before-builds" in trace and "start test-after-builds" in trace
    name = {"test-before-builds": "before", "test-after-builds": "after"}[failing]
    assert f"make test failed: tests {name} the builds" in out
