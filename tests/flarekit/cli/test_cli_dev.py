"""``flarekit dev up|down|status``: a practice cluster in the background, stopped without a
trace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_support import flarekit


def _dev(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "FLAREKIT"))}
    env["FLAREKIT_DEV_DIR"] = str(tmp_path / "dev")
    return subprocess.run(
        [sys.executable, "-m", "flarekit.cli", "dev", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[1].startswith("Z"))


def test_dev_up_prints_a_kubeconfig_that_works_and_down_leaves_no_process(
    tmp_path: Path,
) -> None:
    assert _dev(tmp_path, "status").returncode == 1
    up = _dev(tmp_path, "up")
    try:
        assert up.returncode == 0, up.stderr
        kubeconfig = tmp_path / "dev" / "kubeconfig"
        assert up.stdout == f"export KUBECONFIG={kubeconfig}\n"
        assert "simulated" in up.stderr
        pid = int((tmp_path / "dev" / "pid").read_text())
        assert _alive(pid)

        status = _dev(tmp_path, "status")
        assert status.returncode == 0 and f"pid {pid}" in status.stdout
        again = _dev(tmp_path, "up")  # idempotent: the same cluster, the same KUBECONFIG
        assert again.returncode == 0 and again.stdout == up.stdout
        assert "already running" in again.stderr

        # The context's namespace is team-a, prepared with its default LocalQueue.
        queues = flarekit(None, "queue", "list", "--kubeconfig", str(kubeconfig))
        assert queues.code == 0, queues
        assert "team-a-queue (default)" in queues.out
    finally:
        down = _dev(tmp_path, "down")
    assert down.returncode == 0 and down.stdout == "practice cluster stopped\n"
    assert not _alive(pid)
    assert sorted(p.name for p in (tmp_path / "dev").iterdir()) == ["log"]
    assert _dev(tmp_path, "status").returncode == 1
    assert _dev(tmp_path, "down").stdout == "no practice cluster was running\n"


def test_no_arguments_print_the_usage() -> None:
    result = flarekit(None)
    assert result.code == 0 and result.err == ""
    assert result.out.startswith("usage: flarekit")
    assert "dev" in result.out and "cluster" in result.out
