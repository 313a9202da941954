"""``flarekit ray job ...`` against a real Ray head, and the README's Ray jobs example run in
bash as written. Runs inside the namespace set up by ray_head_in_netns.py, with
integration_inner.py (the head's dashboard is on 127.0.0.1:8265 there, where the README's
example expects it).

Not collected by a plain ``pytest`` run (the name does not start with ``test_``).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from flarekit.cli import main

ADDRESS = os.environ.get("FLAREKIT_RAY_DASHBOARD")
pytestmark = pytest.mark.skipif(
    ADDRESS is None, reason="run through test_ray_jobs_integration.py, which starts Ray"
)
README = Path(__file__).resolve().parents[3] / "README.md"


def flarekit(*argv: str) -> tuple[int, str, str]:
    assert ADDRESS is not None
    out, err = io.StringIO(), io.StringIO()
    at = argv.index("--") if "--" in argv else len(argv)
    code = main([*argv[:at], "--address", ADDRESS, *argv[at:]], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def unique(name: str) -> str:
    return f"cli-{name}-{uuid.uuid4().hex[:8]}"


def test_cli_submit_follows_the_output_and_ends_with_the_status() -> None:
    job = unique("hello")
    code, out, err = flarekit(
        "ray", "job", "submit", "--submission-id", job, "--env", "GREETING=hello",
        "--", "python", "-c", "import os; print(os.environ['GREETING'], 'from the cli')",
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith(f"Ray job {job} submitted to {ADDRESS}\n")
    assert "hello from the cli\n" in out
    assert out.endswith(f"Ray job {job}: SUCCEEDED (Job finished successfully.)\n")
    code, logs, err = flarekit("ray", "job", "logs", job, "--tail", "1")
    assert (code, logs) == (0, "hello from the cli\n"), err


def test_cli_a_failing_job_exits_5() -> None:
    job = unique("fail")
    code, out, err = flarekit(
        "ray", "job", "submit", "--submission-id", job, "--", "python -c 'import sys; sys.exit(3)'"
    )
    assert code == 5, out
    assert err.startswith(f"error: Ray job {job} ended FAILED: ") and "3" in err


def test_cli_stop_list_status_and_delete() -> None:
    job = unique("sleep")
    code, out, err = flarekit(
        "ray", "job", "submit", "--submission-id", job, "--no-wait", "-o", "name",
        "--", "python", "-c", "import time; time.sleep(600)",
    )  # fmt: skip
    assert (code, out) == (0, f"{job}\n"), err
    code, out, err = flarekit("ray", "job", "stop", job, "--timeout", "60")
    assert (code, out) == (0, f"Ray job {job}: STOPPED (Job was intentionally stopped.)\n"), err
    code, out, err = flarekit("ray", "job", "list", "-o", "json")
    listed = {j["submission_id"]: j for j in json.loads(out)}
    assert listed[job]["status"] == "STOPPED"
    code, out, err = flarekit("ray", "job", "list", "-o", "wide")
    assert re.search(rf"^{job}\s+SUBMISSION\s+STOPPED\s", out, re.MULTILINE), out
    code, out, err = flarekit("ray", "job", "status", job, "-o", "yaml")
    assert code == 0 and "status: STOPPED" in out, err
    code, out, err = flarekit("ray", "job", "delete", job)
    assert (code, out) == (0, f"Ray job {job} deleted\n"), err
    code, out, err = flarekit("ray", "job", "status", job)
    assert code == 1 and job in err


def test_cli_logs_follow_a_running_job() -> None:
    job = unique("follow")
    script = (
        "import time\nfor i in range(5):\n    print(f'line {i}', flush=True)\n    time.sleep(0.3)"
    )
    code, _, err = flarekit(
        "ray", "job", "submit", "--submission-id", job, "--no-wait", "--", "python", "-c", script
    )
    assert code == 0, err
    code, out, err = flarekit("ray", "job", "logs", job, "-f", "--timeout", "90")
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("line ")] == [
        f"line {i}" for i in range(5)
    ]


def _readme_ray_block() -> str:
    blocks = re.findall(r"```[a-z]*\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    [block] = [b for b in blocks if "flarekit ray job submit" in b]
    return str(block)


def test_the_readme_ray_jobs_example_runs_in_bash_as_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + _readme_ray_block()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "hello from Ray" in done.stdout
    assert re.search(r"^sleeper\s+SUBMISSION\s+STOPPED\s", done.stdout, re.MULTILINE)
