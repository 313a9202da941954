"""What `make test` runs: the builds beside the checks and the first part of the suite, then
the part of the suite that needs what they built.

The Go builds (control plane, operators, the real node's programs) and the node's images are
CPU- and network-bound and need no Python; most of the suite (FakeCluster, the models, the
generator, the CLI, packaging) needs no built program (tests/build_parts.py tells them apart).
So, in this order:

1. `make test-builds` starts in the background (it needs only Go);
2. `make test-setup`: the virtualenv, the generated models, Debian's packages, PyTorch;
3. `make node-images` starts in the background (it needs Debian's packages and PyTorch);
4. `make test-checks` (lint, type-check), then `make test-before-builds` (pytest
   --part=before-builds);
5. once both background steps have ended, `make test-after-builds` (--part=after-builds).

A background step writes to a log under `.cache/make-test/`: printed whole when the step
fails, summarised (its progress lines left out) when it succeeds. A failed set-up, lint or
type-check, or a background step failing at any time, stops the run at once (the steps still
running, the first part of the suite included, are stopped); a failing first part of the
suite still lets the second run, so that one run reports every failing test. The run fails when any step failed, and ends with each step's wall time and the CPU
time of its processes.

    python tests/run_in_parts.py            # what `make test` does
    python tests/run_in_parts.py --dry-run  # print the steps, run nothing

Standard library only: it starts before the virtualenv exists.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / ".cache" / "make-test"
#: Lines of a build log left out of its summary: progress (`name: 40% (...)`).
PROGRESS = re.compile(r"^\s*\S+: \d+% ")
#: Seconds between looks at the steps that run at the same time.
POLL = 0.5


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


@dataclass
class Step:
    """One `make` target run by this script, and what became of it."""

    name: str
    command: list[str]
    log: Path | None = None  # background steps write here
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    wall: float = 0.0
    cpu: float = 0.0
    code: int | None = None
    stopped: bool = False
    reported: bool = False

    @property
    def failed(self) -> bool:
        return self.code not in (None, 0) and not self.stopped

    @property
    def running(self) -> bool:
        return self.process is not None and self.code is None

    def start(self) -> None:
        print(f"==> {self.name}: {' '.join(self.command)}", flush=True)
        self.started = time.monotonic()
        # A process group of its own, so that stopping the step stops all it started.
        if self.log is None:
            self.process = subprocess.Popen(self.command, cwd=REPO, process_group=0)
            return
        self.log.parent.mkdir(parents=True, exist_ok=True)
        print(f"    (in the background, output in {_shown(self.log)})", flush=True)
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                self.command,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                process_group=0,
            )

    def wait(self, block: bool = True) -> int | None:
        """The step's exit code once it ended (None while it runs and `block` is false);
        its CPU time is that of every process it started and waited for."""
        if self.process is None or self.code is not None:
            return self.code
        pid, status, usage = os.wait4(self.process.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return None
        self.code = self.process.returncode = os.waitstatus_to_exitcode(status)
        self.wall = time.monotonic() - self.started
        self.cpu = usage.ru_utime + usage.ru_stime
        return self.code

    def run_in_foreground(self, beside: Sequence[Step] = ()) -> int | None:
        """Run the step; if a step of `beside` fails meanwhile, print its log and stop this
        one at once (None). Its exit code otherwise."""
        self.start()
        while (code := self.wait(block=False)) is None:
            if failed_beside(beside):
                self.stop()
                return None
            time.sleep(POLL)
        return code

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Stop the step, if it runs, with everything it started, and reap it."""
        if not self.running:
            return
        assert self.process is not None
        self.stopped = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)
        self.wait()

    def report(self) -> None:
        """Print a background step's log once it ended: whole if it failed, else without
        progress lines."""
        if self.log is None or not self.log.exists() or self.code is None or self.reported:
            return
        self.reported = True
        if self.stopped:
            return
        lines = self.log.read_text(errors="replace").splitlines()
        if self.failed:
            print(f"==> {self.name} failed (exit {self.code}); its log:")
            shown = lines
        else:
            print(f"==> {self.name} done; {_shown(self.log)} without progress lines:")
            shown = [line for line in lines if line.strip() and not PROGRESS.match(line)]
        for line in shown:
            print(f"    {line}")
        sys.stdout.flush()


def failed_beside(steps: Sequence[Step]) -> bool:
    """Whether one of the background `steps` has failed (its log is printed then)."""
    failed = [step for step in steps if step.wait(block=False) and step.failed]
    for step in failed:
        step.report()
    return bool(failed)


def wait_for_all(steps: Sequence[Step]) -> bool:
    """Wait until every step has ended, or one failed; whether all succeeded."""
    while any(step.running for step in steps):
        if failed_beside(steps):
            return False
        time.sleep(POLL)
    return not failed_beside(steps)


def make(*targets: str) -> list[str]:
    return [os.environ.get("MAKE", "make"), "--no-print-directory", *targets]


def plan(logs: Path = LOGS) -> dict[str, Step]:
    steps = [
        Step("builds", make("test-builds"), log=logs / "builds.log"),
        Step("set-up", make("test-setup")),
        Step("images", make("node-images"), log=logs / "images.log"),
        Step("lint and typecheck", make("test-checks")),
        Step("tests before the builds", make("test-before-builds")),
        Step("tests after the builds", make("test-after-builds")),
    ]
    return {step.name: step for step in steps}


def summary(steps: Sequence[Step], total: float) -> None:
    print("\n==> make test: each step's wall time and its processes' CPU time (user + system)")
    for step in steps:
        if step.process is None:
            state = "not run"
        elif step.stopped:
            state = "stopped"
        elif step.failed:
            state = f"FAILED (exit {step.code})"
        else:
            state = "ok"
        print(f"    {step.name:<24} {step.wall:7.0f} s wall {step.cpu:7.0f} s CPU  {state}")
    print(f"    {'whole run':<24} {total:7.0f} s wall", flush=True)


def run(logs: Path = LOGS) -> int:
    steps = plan(logs)
    started = time.monotonic()
    background = [steps["builds"], steps["images"]]

    def interrupted(signum: int, _frame: object) -> None:
        for step in steps.values():
            step.stop(signum if step.log is None else signal.SIGTERM)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    try:
        steps["builds"].start()
        for name in ("set-up", "images", "lint and typecheck", "tests before the builds"):
            step = steps[name]
            if step.log is not None:
                step.start()
                continue
            code = step.run_in_foreground(beside=background)
            if code is None or (code != 0 and name != "tests before the builds"):
                break
        else:
            if wait_for_all(background):
                steps["tests after the builds"].run_in_foreground()
    finally:
        for step in background:
            step.stop()
            step.report()
    summary(list(steps.values()), time.monotonic() - started)
    failed = [step.name for step in steps.values() if step.failed]
    if failed:
        print(f"make test failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the steps, run nothing")
    parser.add_argument("--logs", type=Path, default=LOGS, help=f"default: {LOGS}")
    args = parser.parse_args(argv)
    if args.dry_run:
        for step in plan(args.logs).values():
            where = f"  > {step.log}" if step.log else ""
            print(f"{step.name}: {' '.join(step.command)}{where}")
        return 0
    return run(args.logs.resolve())


if __name__ == "__main__":
    sys.exit(main())
