"""``flarekit dev up|down|status``: a practice cluster in the background, to try flarekit on.

Why: the README's examples, the CLI and a notebook should all be tryable before there is a
Kubernetes cluster. ``dev up`` starts the practice cluster (:mod:`flarekit.cli._practice`:
FakeCluster with simulated KubeRay, Kueue, Trainer and AppWrapper operators whose pods run
on this machine, prepared with namespace ``team-a`` and its queue) as a background process of
its own session, waits until it answers, and prints ``export KUBECONFIG=...`` on stdout (so
``eval "$(flarekit dev up)"`` works) and what it started on stderr. ``dev down`` stops it,
and with it every process its pods started, and waits until the process is gone; ``dev
status`` says whether it runs (exit 0) or not (exit 1); ``dev setup`` installs PyTorch for
training pods into the user's cache (once, with the installer's progress).

Where its files live: ``$FLAREKIT_DEV_DIR``, else ``$XDG_STATE_HOME/flarekit/dev``, else
``~/.local/state/flarekit/dev``: ``kubeconfig``, ``ready`` (pid and URL, written once it
serves), ``pid`` and ``log`` (the process's output, for when it fails to start).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import flarekit.walkthrough.backends
from flarekit.cli._common import seconds
from flarekit.cli._exit import ExitCode

__all__ = ["DevCluster", "dev_dir", "register"]

SERVER_MODULE = "flarekit.cli._practice"
#: Where FakeCluster comes from: the flarekit-testing distribution (an extra of flarekit).
TESTING_PACKAGE = "flarekit_testing"
_SIMULATED = (
    "FakeCluster with simulated KubeRay, Kueue, Trainer and AppWrapper operators whose pods "
    "run on this machine (training functions under torchrun, Ray clusters as local Ray); "
    "pods that need an image's entrypoint or a GPU stay simulated and say so"
)


class DevError(RuntimeError):
    """The practice cluster could not be started or stopped; the message says why."""


def dev_dir() -> Path:
    explicit = os.environ.get("FLAREKIT_DEV_DIR")
    if explicit:
        return Path(explicit)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "flarekit" / "dev"


def _alive(pid: int) -> bool:
    """Whether `pid` is a running practice-cluster process (not a pid reused by another)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # someone else's process: not ours
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        try:
            return SERVER_MODULE in cmdline.read_bytes().decode(errors="replace")
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class DevCluster:
    """The practice cluster's files in `directory`, and what they say about it."""

    directory: Path

    @property
    def kubeconfig(self) -> Path:
        return self.directory / "kubeconfig"

    @property
    def log(self) -> Path:
        return self.directory / "log"

    def pid(self) -> int | None:
        try:
            return int((self.directory / "pid").read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None

    def running(self) -> bool:
        pid = self.pid()
        return pid is not None and _alive(pid) and (self.directory / "ready").exists()

    def server(self) -> str:
        try:
            data = json.loads((self.directory / "ready").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return "unknown"
        return str(data.get("server", "unknown"))

    def start(self, timeout: float) -> int:
        """Start the server process and wait until it serves; returns its pid."""
        if importlib.util.find_spec(TESTING_PACKAGE) is None:
            raise DevError(
                "the practice cluster needs the flarekit-testing distribution, which is not "
                "installed: pip install 'flarekit[testing]' (from a clone: pip install ./testing)"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in ("ready", "kubeconfig", "pid"):
            (self.directory / stale).unlink(missing_ok=True)
        with open(self.log, "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", SERVER_MODULE, str(self.directory)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # survives the shell; its own process group
                cwd=self.directory,
            )
        (self.directory / "pid").write_text(str(process.pid), encoding="utf-8")
        deadline = time.monotonic() + timeout
        while not (self.directory / "ready").exists():
            if process.poll() is not None:
                self._forget()
                raise DevError(f"the practice cluster did not start: {self._log_tail()}")
            if time.monotonic() > deadline:
                self.stop(grace=5.0)
                raise DevError(
                    f"the practice cluster did not answer within {timeout:g}s; "
                    f"its output: {self._log_tail()}"
                )
            time.sleep(0.1)
        return process.pid

    def stop(self, grace: float = 10.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL of its process group after `grace`
        seconds) and wait until it is gone; False when none was running."""
        pid = self.pid()
        if pid is None or not _alive(pid):
            self._forget()
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.05)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
            while _alive(pid):
                _reap(pid)
                time.sleep(0.05)
        self._forget()
        return True

    def _forget(self) -> None:
        for name in ("ready", "kubeconfig", "pid"):
            (self.directory / name).unlink(missing_ok=True)

    def _log_tail(self) -> str:
        try:
            lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "no output"
        return " | ".join(lines[-5:]) or "no output"


def _reap(pid: int) -> None:
    """Collect the exit status when the server is our own child (tests, `dev up` then `dev
    down` in one process), so that it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _up(args: argparse.Namespace) -> int:
    dev = DevCluster(dev_dir())
    if dev.running():
        args.err.write(f"the practice cluster is already running (pid {dev.pid()})\n")
    else:
        pid = dev.start(args.timeout)
        args.err.write(
            f"practice cluster started (pid {pid}, {dev.server()}): {_SIMULATED}. Namespace "
            f"team-a has the default LocalQueue team-a-queue. Stop it with: flarekit dev down\n"
        )
    args.out.write(f"export KUBECONFIG={dev.kubeconfig}\n")
    args.out.flush()
    return 0


def _down(args: argparse.Namespace) -> int:
    dev = DevCluster(dev_dir())
    stopped = dev.stop()
    args.out.write("practice cluster stopped\n" if stopped else "no practice cluster was running\n")
    return 0


def _setup(args: argparse.Namespace) -> int:
    if importlib.util.find_spec(TESTING_PACKAGE) is None:
        raise DevError(
            "the practice cluster needs the flarekit-testing distribution, which is not "
            "installed: pip install 'flarekit[testing]' (from a clone: pip install ./testing)"
        )
    folder = flarekit.walkthrough.backends.ensure_torch()
    args.out.write(f"PyTorch for the practice cluster's training pods: {folder}\n")
    return 0


def _status(args: argparse.Namespace) -> int:
    dev = DevCluster(dev_dir())
    if not dev.running():
        args.out.write("no practice cluster is running (start one with: flarekit dev up)\n")
        return int(ExitCode.API_ERROR)
    args.out.write(
        f"practice cluster running: pid {dev.pid()}, {dev.server()}\n"
        f"export KUBECONFIG={dev.kubeconfig}\n"
    )
    return 0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``dev`` and its subcommands."""
    group = commands.add_parser(
        "dev",
        help="a practice cluster to try flarekit on",
        description="Start, stop or check a practice cluster running in the background: "
        f"{_SIMULATED}.",
    )
    sub = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    up = sub.add_parser(
        "up", help='start it and print the KUBECONFIG to use (eval "$(flarekit dev up)")'
    )
    up.add_argument("--timeout", type=seconds, default=120.0, help="seconds to wait (120)")
    up.set_defaults(run=_up)
    down = sub.add_parser("down", help="stop it; no process is left")
    down.set_defaults(run=_down)
    status = sub.add_parser("status", help="whether it runs (exit 0) or not (exit 1)")
    status.set_defaults(run=_status)
    setup = sub.add_parser(
        "setup",
        help="install PyTorch for training pods into the user's cache (once; about 2.8 GB)",
    )
    setup.set_defaults(run=_setup)
