"""Debian's chromium, headless, driven over the DevTools protocol on a pipe (no port opened).

The widget screenshot test loads a page from a file, asks the page where its table cells are
(`boxes`), and takes a screenshot of the same page; nothing here reaches the network (the
browser runs without one under ``unshare -n`` when the machine allows it).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"

_FLAGS = (
    "--headless",
    "--no-sandbox",  # root in CI; the page is our own file
    "--disable-gpu",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-extensions",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--window-size=1000,700",
)


def _without_network() -> list[str]:
    """``unshare -n`` when this machine lets us make a network namespace, else nothing."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else []


class Browser:
    """One headless chromium; `send` runs one DevTools command and returns its result."""

    def __init__(self, process: subprocess.Popen[bytes], to_browser: int, from_browser: int):
        self._process = process
        self._out = os.fdopen(to_browser, "wb", buffering=0)
        self._in = os.fdopen(from_browser, "rb", buffering=0)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = self._in.read(1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            command["sessionId"] = session
        self._out.write(json.dumps(command).encode() + b"\0")
        while True:
            message = self._read_message()
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
            self.events.append(message)

    def wait_for(self, event: str) -> dict[str, Any]:
        for i, message in enumerate(self.events):
            if message.get("method") == event:
                return self.events.pop(i)
        while True:
            message = self._read_message()
            if message.get("method") == event:
                return message
            self.events.append(message)

    def open_page(self, url: str) -> str:
        """A new tab showing `url`, loaded; returns its session id."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.enable", session)
        self.send("Page.navigate", session, url=url)
        self.wait_for("Page.loadEventFired")
        return str(session)

    def evaluate(self, session: str, expression: str) -> Any:
        result = self.send("Runtime.evaluate", session, expression=expression, returnByValue=True)
        return result["result"].get("value")

    def screenshot(self, session: str) -> bytes:
        """The page's viewport as PNG bytes, as the browser painted it."""
        data = self.send("Page.captureScreenshot", session, format="png")["data"]
        return base64.b64decode(data)

    def close(self) -> None:
        with suppress(RuntimeError, OSError):
            self.send("Browser.close")
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._out.close()
        self._in.close()


def _high(fd: int) -> int:
    """`fd` moved to a descriptor above 9, so the shell can put it on 3 or 4 safely."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


@contextmanager
def headless_chromium() -> Iterator[Browser]:
    """A running headless chromium, closed (and waited for) on exit."""
    with tempfile.TemporaryDirectory(prefix="flarekit-chromium-") as profile:
        # The DevTools pipe: chromium reads commands on fd 3 and writes answers on fd 4.
        commands_read, commands_write = (_high(fd) for fd in os.pipe())
        answers_read, answers_write = (_high(fd) for fd in os.pipe())
        # bash puts the pipe ends on 3 and 4 and closes the originals before chromium starts.
        placed = f"3<&{commands_read} 4>&{answers_write} {commands_read}<&- {answers_write}>&-"
        process = subprocess.Popen(
            [
                *_without_network(),
                *("bash", "-c", f'exec "$0" "$@" {placed}', CHROMIUM),
                *(*_FLAGS, f"--user-data-dir={profile}", "about:blank"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(commands_read, answers_write),
        )
        os.close(commands_read)
        os.close(answers_write)
        browser = Browser(process, commands_write, answers_read)
        try:
            yield browser
        finally:
            browser.close()


def page_file(directory: Path, body: str) -> str:
    """A file:// URL of an HTML page with `body` (UTF-8, white background, no margins)."""
    path = directory / "page.html"
    path.write_text(
        '<!doctype html><html><head><meta charset="utf-8"></head>'
        f'<body style="margin:8px;background:#fff;font:14px DejaVu Sans,sans-serif">'
        f"{body}</body></html>",
        encoding="utf-8",
    )
    return path.as_uri()
