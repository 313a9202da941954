"""RayJobClient and DistributedJob against a real Ray cluster (Ray from the dev extra), isolated
in its own namespaces.

Ray binds beyond loopback and `ray stop` kills every Ray process it can see, so the cluster never
runs in the test's own namespaces: ray_head_in_netns.py runs under ``unshare`` with a private
network (loopback only) and PID namespace, starts a head and a worker node once, runs
integration_inner.py and cli_inner.py (the ``flarekit ray job`` commands) there, and stops
Ray. This test checks the outcome, test by test, from the JUnit report, and that no process
of that cluster is left.

The DDP jobs train with real PyTorch, from the virtualenv that ``make torch-venv`` puts in the
user's cache (see torch_venv.py). Without it the test is skipped with the reason, except in CI
(``CI=true``), where it fails.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch_venv

HERE = Path(__file__).parent
UNSHARE = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"]

# The behaviours the Ray job client must show against a real head; each is one inner test.
REQUIRED = {
    "test_version",
    "test_submit_wait_and_logs",
    "test_generated_submission_id_and_runtime_env",
    "test_follow_logs_streams_a_running_job",
    "test_failed_job_reports_its_exit_code",
    "test_stop_a_sleeping_job",
    "test_list_jobs",
    "test_duplicate_submission_id_is_refused",
    "test_delete_a_finished_job",
    "test_unknown_job_is_not_found",
    "test_local_working_dir_and_py_modules_are_uploaded",
    "test_stop_ends_every_process_the_launcher_started",
    "test_a_gang_that_cannot_fit_fails_in_time_naming_the_resources",
    "test_ddp_training_with_a_relative_script_succeeds[1x2]",
    "test_ddp_training_with_a_relative_script_succeeds[2x1]",
    "test_stop_ends_every_torch_process_on_every_node",
    # cli_inner.py: the `flarekit ray job` commands and the README's Ray jobs example
    "test_cli_submit_follows_the_output_and_ends_with_the_status",
    "test_cli_a_failing_job_exits_5",
    "test_cli_stop_list_status_and_delete",
    "test_cli_logs_follow_a_running_job",
    "test_the_readme_ray_jobs_example_runs_in_bash_as_written",
}


def _torch_bin() -> Path:
    folder, why = torch_venv.find()
    if folder is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true: {why}", pytrace=False)
        pytest.skip(why)
    return folder / "bin"


def _require_isolation() -> None:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed; it comes with the dev extra: pip install -e '.[dev]'")
    if shutil.which("unshare") is None:
        pytest.skip("'unshare' (util-linux) is not available to isolate the Ray head")
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(
            "not permitted to create network and PID namespaces for the Ray head "
            f"(needs root or CAP_SYS_ADMIN): {probe.stderr.strip()}"
        )


def _leftover_processes(marker: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in text:
            found.append(f"{cmdline.parent.name}: {text[:200]}")
    return found


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ray_job_client_against_a_real_ray_head(tmp_path: Path) -> None:
    _require_isolation()
    torch_bin = _torch_bin()
    # Ray puts unix sockets under its temp dir, whose paths must stay short (108 bytes).
    ray_temp = Path(
        tempfile.mkdtemp(prefix="fkray-", dir="/tmp" if Path("/tmp").is_dir() else None)
    )
    junit = tmp_path / "inner.xml"
    try:
        run = subprocess.run(
            [
                *UNSHARE,
                sys.executable,
                str(HERE / "ray_head_in_netns.py"),
                str(ray_temp),
                str(junit),
                str(HERE / "cli_inner.py"),
            ],
            env={**os.environ, "FLAREKIT_TORCH_BIN": str(torch_bin)},
            capture_output=True,
            text=True,
            timeout=840,
        )
        leftovers = _leftover_processes(str(ray_temp))
    finally:
        shutil.rmtree(ray_temp, ignore_errors=True)
    output = f"{run.stdout}\n{run.stderr}"
    assert run.returncode == 0, f"exit {run.returncode}:\n{output[-15000:]}"
    assert leftovers == [], "Ray processes outlived their namespace"

    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        problems = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name")] = problems[0] if problems else "passed"
    missing = REQUIRED - outcomes.keys()
    assert not missing, f"inner tests not run: {sorted(missing)}"
    assert {name: o for name, o in outcomes.items() if o != "passed"} == {}, output[-15000:]
    print(run.stdout[-2000:])
