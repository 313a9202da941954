"""Run one control-plane program as a child process that cannot outlive its owner.

Each program runs in its own process group, with its output in a log file of the control
plane's directory. On Linux it is started through `setpriv --pdeathsig KILL` (util-linux), so
that the kernel kills it if the Python process dies without cleaning up (a crash, SIGKILL, a
test runner's hard timeout). Stopping sends SIGTERM to the whole group, waits, then SIGKILLs
whatever is left: no program and no grandchild survives `stop()`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


class ComponentFailed(RuntimeError):
    """A control-plane program exited or never became ready; carries its log's last lines."""


_SETPRIV = shutil.which("setpriv")


class Component:
    """A started (or not yet started) program of the control plane."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log: Path,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log = log
        self.env = dict(env) if env is not None else None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        argv = self.argv
        if _SETPRIV is not None:
            argv = [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        with open(self.log, "ab") as out:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def check(self) -> None:
        """Raise `ComponentFailed` if the program has exited."""
        if self._proc is not None and self._proc.poll() is not None:
            raise ComponentFailed(
                f"{self.name} exited with code {self._proc.returncode}:\n{self.tail()}"
            )

    def tail(self, lines: int = 25) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace: float = 5.0) -> None:
        """Terminate the program's process group; kill it after `grace` seconds."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
        # The group may hold children even when the leader is gone.
        _signal_group(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process immune to SIGKILL
            raise ComponentFailed(f"{self.name} (pid {proc.pid}) did not exit") from None
        _wait_group_gone(proc.pid, grace)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _wait_group_gone(pgid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
