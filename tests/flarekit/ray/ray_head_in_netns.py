"""Start a real Ray cluster in a private network and PID namespace, run the integration tests there.

Run by test_ray_jobs_integration.py as
``unshare -n -p -f --mount-proc --kill-child python ray_head_in_netns.py TEMP_DIR JUNIT_XML
[PYTEST ARGS...]``. The cluster is a head and one worker node, one CPU each, so that jobs
spread over two nodes (a DDP job with ``j="2x1"``) really run on two raylets.
The network namespace holds only a loopback interface, so whatever Ray binds (GCS, raylet,
dashboard, agents, workers) is reachable from nowhere else; the PID namespace makes this script
PID 1 (an init that reaps orphans), so ``ray stop`` sees only this cluster's processes and,
when the script exits, the kernel kills anything Ray left behind.

Exit status: the inner pytest's, or 90 if the Ray head did not come up.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

DASHBOARD_PORT = 8265
GCS_PORT = 6379
#: The worker node's dashboard agent needs a port of its own (the head's takes the default).
WORKER_AGENT_PORT = 52366
NODES = 2
INNER_TESTS = Path(__file__).with_name("integration_inner.py")
RAY_STARTUP_FAILED = 90

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def bring_loopback_up() -> None:
    """``ip link set lo up``, without needing iproute2: a new namespace's lo starts down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22s", b"lo", 0, b"")
        flags = struct.unpack("16sH22s", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22s", b"lo", flags | _IFF_UP, b""))


def check_isolated() -> None:
    """Refuse to start Ray unless this really is a fresh network and PID namespace."""
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"] or os.getpid() != 1:
        sys.exit(
            f"refusing to start Ray: expected a private namespace with only 'lo' and PID 1, "
            f"found interfaces {interfaces} and PID {os.getpid()}; run under "
            "'unshare -n -p -f --mount-proc'"
        )


def ray(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ray.scripts.scripts", *args]
    return subprocess.run(command, env=env, text=True, capture_output=True, timeout=120)


def wait_for_dashboard(url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/api/version", timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.5)
    return False


def alive_nodes(url: str) -> int:
    """How many nodes the dashboard reports alive (0 when it cannot tell yet)."""
    try:
        with urllib.request.urlopen(f"{url}/nodes?view=summary", timeout=5) as response:
            summary = json.load(response)["data"]["summary"]
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    return sum(1 for node in summary if node.get("raylet", {}).get("state") == "ALIVE")


def wait_for_nodes(url: str, count: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive_nodes(url) >= count:
            return True
        time.sleep(0.5)
    return False


def show_ray_logs(temp_dir: Path) -> None:
    for name in ("dashboard.log", "dashboard_agent.log", "raylet.out", "gcs_server.out"):
        for path in sorted(temp_dir.glob(f"session_*/logs/{name}")):
            lines = path.read_text(errors="replace").splitlines()[-30:]
            print(f"----- {path.name} (last {len(lines)} lines)", *lines, sep="\n")


def main(temp_dir: Path, junit_xml: Path, pytest_args: list[str]) -> int:
    bring_loopback_up()
    env = dict(os.environ)
    # Job entrypoints run `python` from PATH: make it this interpreter's environment.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    url = f"http://127.0.0.1:{DASHBOARD_PORT}"
    started = time.monotonic()
    try:
        start = ray(
            "start",
            "--head",
            f"--port={GCS_PORT}",
            "--node-ip-address=127.0.0.1",
            "--dashboard-host=127.0.0.1",
            f"--dashboard-port={DASHBOARD_PORT}",
            "--include-dashboard=true",
            "--num-cpus=1",
            "--num-gpus=0",
            "--object-store-memory=100000000",
            "--disable-usage-stats",
            f"--temp-dir={temp_dir}",
            env=env,
        )
        if start.returncode != 0 or not wait_for_dashboard(url, timeout=90):
            print("ray start failed:", start.stdout, start.stderr, sep="\n")
            show_ray_logs(temp_dir)
            return RAY_STARTUP_FAILED
        print(f"Ray head up in {time.monotonic() - started:.1f}s", flush=True)
        worker = ray(
            "start",
            f"--address=127.0.0.1:{GCS_PORT}",
            "--node-ip-address=127.0.0.1",
            f"--dashboard-agent-listen-port={WORKER_AGENT_PORT}",
            "--num-cpus=1",
            "--num-gpus=0",
            "--object-store-memory=100000000",
            "--disable-usage-stats",
            env=env,
        )
        if worker.returncode != 0 or not wait_for_nodes(url, NODES, timeout=90):
            print("ray start (worker node) failed:", worker.stdout, worker.stderr, sep="\n")
            show_ray_logs(temp_dir)
            return RAY_STARTUP_FAILED
        print(f"{NODES} Ray nodes up in {time.monotonic() - started:.1f}s", flush=True)
        inner = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                str(INNER_TESTS),
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={junit_xml}",
                *pytest_args,
            ],
            env={**env, "FLAREKIT_RAY_DASHBOARD": url},
            timeout=720,
        )
        if inner.returncode != 0:
            show_ray_logs(temp_dir)
        return inner.returncode
    finally:
        stopping = time.monotonic()
        stop = ray("stop", "--force", env=env)
        print(
            f"ray stop: exit {stop.returncode} in {time.monotonic() - stopping:.1f}s; "
            f"total {time.monotonic() - started:.1f}s"
        )


def run_as_init(work: Callable[[], int]) -> int:
    """Be the namespace's init: run `work` in a child and reap every orphan until it ends.

    Processes that Ray kills are re-parented to PID 1; unreaped, they stay zombies and
    `ray stop` waits out its whole grace period for them to disappear.
    """
    sys.stdout.flush()
    worker = os.fork()
    if worker == 0:
        code = 1
        try:
            code = work()
        finally:
            sys.stdout.flush()
            os._exit(code)
    while True:
        pid, status = os.wait()
        if pid == worker:
            return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    temp, junit = Path(sys.argv[1]), Path(sys.argv[2])
    check_isolated()
    sys.exit(run_as_init(lambda: main(temp, junit, sys.argv[3:])))
