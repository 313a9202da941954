"""The operators' sandbox: a private network and /tmp, crossed only by the relays asked for,
and nothing left behind when it is stopped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from flarekit_testing.controlplane._process import Component
from flarekit_testing.controlplane._sandbox import (
    Relay,
    SandboxUnavailable,
    Spec,
    launcher_argv,
    unshare_command,
)


def _sandbox_works() -> str:
    try:
        command = unshare_command()
    except SandboxUnavailable as exc:
        return str(exc)
    done = subprocess.run([*command, "true"], capture_output=True, text=True)
    return "" if done.returncode == 0 else f"unshare failed here: {done.stderr.strip()}"


pytestmark = pytest.mark.skipif(bool(_sandbox_works()), reason=_sandbox_works() or "-")

# What runs inside: it reports what it sees, calls the host through the outbound relay, and
# serves on every interface at a fixed port, as operators do.
INSIDE = """
import http.server, json, os, socket, sys, urllib.request
seen = {
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "tmp": sorted(os.listdir("/tmp")),
    "host": urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/").read().decode(),
    "file": open("/tmp/given/data.txt").read(),
    "token": open("/var/run/secrets/kubernetes.io/serviceaccount/token").read(),
}
open("/tmp/written-inside", "w").write("x")
print(json.dumps(seen), flush=True)
class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"inside"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("0.0.0.0", 9443), Answer).serve_forever()
"""


class _Host(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def host_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Host)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _get(url: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return str(answer.read().decode())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_sandbox_isolates_and_relays_and_stops_cleanly(tmp_path: Path, host_server: int) -> None:
    given = tmp_path / "given.txt"
    given.write_text("from the host")
    inbound = _free_port()
    spec = Spec(
        argv=[sys.executable, "-c", INSIDE, str(host_server)],
        env={"PATH": os.environ["PATH"]},
        keep=[str(tmp_path), sys.prefix],  # the interpreter's environment may be under /tmp
        outbound=[Relay(host_server, host_server)],
        inbound=[Relay(9443, inbound)],
        files={
            "/tmp/given/data.txt": str(given),
            "/var/run/secrets/kubernetes.io/serviceaccount/token": str(given),
        },
    )
    spec.write(tmp_path / "spec.json")
    taken_before = _listening(9443)
    component = Component("sandboxed", launcher_argv(tmp_path / "spec.json"), tmp_path / "log")
    component.start()
    try:
        assert _get(f"http://127.0.0.1:{inbound}/") == "inside"
        seen = __import__("json").loads(
            next(line for line in component.tail(50).splitlines() if line.startswith("{"))
        )
        assert seen["interfaces"] == ["lo"]  # a network of its own
        assert seen["host"] == "host"  # the outbound relay reaches the host's server
        assert seen["file"] == seen["token"] == "from the host"  # as a pod's volumes
        # /tmp is private: only the kept folder (and what was given) is there.
        kept = {
            Path(p).resolve().relative_to("/tmp").parts[0]
            for p in (tmp_path, sys.prefix)
            if Path(p).resolve().is_relative_to("/tmp")
        }
        assert set(seen["tmp"]) <= kept | {"given"}
        assert not Path("/tmp/written-inside").exists()
        assert not Path("/var/run/secrets/kubernetes.io/serviceaccount/token").exists()
        # Port 9443 "on every interface" is bound in the sandbox only.
        if not taken_before:
            assert not _listening(9443)
        group = component.pid
    finally:
        component.stop()
    assert group is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_spec_round_trips(tmp_path: Path) -> None:
    spec = Spec(["a"], {"B": "c"}, ["/tmp/x"], [Relay(1, 2)], [Relay(3, 4)], {"/tmp/f": "/g"})
    spec.write(tmp_path / "s.json")
    assert Spec.read(tmp_path / "s.json") == spec
