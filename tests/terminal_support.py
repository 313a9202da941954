"""Running ``flarekit`` as a real child process in a pseudo-terminal, and pressing Ctrl-C.

The child is a session leader whose controlling terminal is the pty, so writing the interrupt
character (``\\x03``) makes the terminal's line discipline send SIGINT to it, as a keyboard
would. Its stdout and stderr both go to the pty: what a user sees is what the test reads.
"""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Screen:
    """How the child ended: its exit code and the lines it left on the terminal."""

    code: int
    text: str

    @property
    def lines(self) -> list[str]:
        """The lines as the terminal shows them: escape codes removed, and of a line rewritten
        in place (``\\r``) only what was written last."""
        plain = _ANSI.sub("", self.text)
        shown = [line.split("\r")[-1].strip() for line in plain.replace("\r\n", "\n").split("\n")]
        return [line for line in shown if line]


def interrupt_flarekit(
    argv: Sequence[str],
    ready: Callable[[str], bool],
    *,
    timeout: float = 120.0,
    columns: int = 80,
) -> Screen:
    """Start ``python -m flarekit.cli argv`` in a pty `columns` wide, press Ctrl-C once
    `ready(output so far)` is true, and return how it ended (fails if it never gets ready
    or does not end within `timeout` seconds)."""
    env = {k: v for k, v in os.environ.items() if k not in _CI_VARIABLES and k != "KUBECONFIG"}
    env.update(COLUMNS=str(columns), LINES="24", TERM="xterm")
    pid, fd = pty.fork()
    if pid == 0:  # the child: nothing but exec, it is a fresh process from here on
        os.execve(sys.executable, [sys.executable, "-m", "flarekit.cli", *argv], env)
    output = b""
    pressed = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            readable, _, _ = select.select([fd], [], [], 0.1)
            if readable:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
            if not pressed and ready(output.decode(errors="replace")):
                os.write(fd, b"\x03")
                pressed = True
        else:
            raise AssertionError(f"flarekit did not end in {timeout}s: {output!r}")
    finally:
        if time.monotonic() >= deadline:
            os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert pressed, f"flarekit ended before it was interrupted: {output!r}"
    return Screen(os.waitstatus_to_exitcode(status), output.decode(errors="replace"))
