"""Running tests whose programs bind beyond loopback (Ray, torch.distributed) in a network and
PID namespace of their own.

The rule of this suite: anything that listens on more than 127.0.0.1 runs where nothing else
can reach it. `run_inner_tests` runs a pytest file under ``unshare --net --pid --fork
--mount-proc --kill-child`` (only a loopback interface, brought up here, and a PID namespace
whose init reaps every orphan, so that no process of the run outlives it) and returns each
inner test's outcome from its JUnit report. Without ``unshare`` or the right to make
namespaces the calling test is skipped with the reason, except in CI (``CI=true``), where it
fails.

``python netns_support.py JUNIT [PYTEST ARGS...]`` (or ``--command ARGV...``) is the inner
side; `run_in_namespaces` runs any command there.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

UNSHARE = ["unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child"]
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def namespaces_unavailable() -> str | None:
    """Why this machine cannot give a test its own namespaces (None when it can)."""
    if shutil.which("unshare") is None:
        return "'unshare' (util-linux) is not available to isolate the test's network"
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return (
            "not permitted to create network and PID namespaces (needs root or "
            f"CAP_SYS_ADMIN): {probe.stderr.strip()}"
        )
    return None


def require_namespaces() -> None:
    import pytest

    why = namespaces_unavailable()
    if why is not None:
        if in_ci():
            pytest.fail(f"CI=true: {why}", pytrace=False)
        pytest.skip(why)


def bring_loopback_up() -> None:
    """``ip link set lo up``, without iproute2: a new network namespace's lo starts down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22s", b"lo", 0, b"")
        flags = struct.unpack("16sH22s", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22s", b"lo", flags | _IFF_UP, b""))


def isolated() -> bool:
    """Whether this process is the init of a fresh network and PID namespace."""
    return sorted(name for _, name in socket.if_nameindex()) == ["lo"] and os.getpid() == 1


def run_inner_tests(
    tests: Path,
    junit: Path,
    *pytest_args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 1500,
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run the pytest file `tests` in namespaces of its own; its result and each test's
    outcome (``passed``, ``failure``, ``error`` or ``skipped``)."""
    run = subprocess.run(
        [*UNSHARE, sys.executable, str(Path(__file__)), str(junit), str(tests), *pytest_args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    outcomes: dict[str, str] = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            problems = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
            outcomes[str(case.get("name"))] = problems[0] if problems else "passed"
    return run, outcomes


def run_in_namespaces(
    argv: list[str], env: Mapping[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """Run a command in namespaces of its own (see the module notes)."""
    return subprocess.run(
        [*UNSHARE, sys.executable, str(Path(__file__)), "--command", *argv],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _inner(junit: str, args: list[str]) -> int:
    """Be the namespace's init: run pytest in a child, reap every orphan until it ends."""
    bring_loopback_up()
    if not isolated():
        print("refusing to run: not a fresh network and PID namespace", file=sys.stderr)
        return 90
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        code = 1
        try:
            if junit == "--command":
                command = args
            else:
                command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junitxml={junit}", *args]  # fmt: skip
            code = subprocess.run(command, check=False).returncode
        finally:
            sys.stdout.flush()
            os._exit(code)
    while True:
        pid, status = os.wait()
        if pid == child:
            return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(_inner(sys.argv[1], sys.argv[2:]))
