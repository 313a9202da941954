"""A hostile "API server" on 127.0.0.1 for the bounded-read tests: it answers the way no
kube-apiserver does, but anything at the kubeconfig's address might.

Plain HTTP (the bounds under test do not depend on TLS); each path picks a behaviour:

* ``/huge`` - 200 with a 2 GiB body and no Content-Length (only the end of the connection
  ends it); ``/huge-declared`` - the same, announced in Content-Length;
* ``/bomb`` - 200 with a gzip body of about 2 MB that inflates to 2 GiB of zeros;
* ``/trickle-body`` - 200 headers at once, then the 100 bytes of body one every `TRICKLE` s;
* ``/trickle-headers`` - the status line and headers themselves one byte every `TRICKLE` s;
* ``/api/v1/namespaces/<ns>/pods?watch=...`` - a watch whose behaviour the namespace picks:
  ``endless`` (one event line that never ends), ``garbage`` (a good event, then a line that
  is not JSON, then, on the next connection, events from where the client resumes) and
  ``always-garbage`` (a line that is not JSON on every connection).

`HostileServer.watch_versions` records the resourceVersion of every watch request, so a
test can see where the client resumed. Run as a program, the server serves in a process of its
own and prints its URL: a test that times the client then does not share its interpreter (and
its lock) with the server's threads.
"""

from __future__ import annotations

import contextlib
import functools
import json
import socket
import socketserver
import struct
import subprocess
import sys
import threading
import urllib.parse
import zlib
from pathlib import Path
from typing import Any

GIB = 1024 * 1024 * 1024
MIB = 1024 * 1024
#: Seconds between the bytes of a trickling answer.
TRICKLE = 5.0


@functools.cache
def gzip_bomb(size: int = 2 * GIB) -> bytes:
    """A valid gzip stream of `size` zero bytes, about a thousandth of that long: one MiB of
    zeros compressed with a full flush compresses to the same bytes every time, so the
    stream is one compressed MiB repeated, with the real CRC and length in its trailer."""
    block = bytes(MIB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeated = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH) == repeated
    crc = 0
    for _ in range(size // MIB):
        crc = zlib.crc32(block, crc)
    final_empty_block = b"\x03\x00"  # BFINAL=1, fixed Huffman, end of block
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return first + repeated * (size // MIB - 1) + final_empty_block + trailer


def _event(name: str, version: int) -> bytes:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": str(version)},
    }
    return json.dumps({"type": "ADDED", "object": pod}).encode() + b"\n"


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            data = sock.recv(65536)
            if not data:
                return
            head += data
        line = head.split(b"\r\n", 1)[0].decode()
        target = line.split(" ")[1]
        url = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(url.query))
        with contextlib.suppress(OSError):  # the client gave up: that is the point
            self._answer(sock, url.path, query)

    def _answer(self, sock: socket.socket, path: str, query: dict[str, str]) -> None:
        if path in ("/huge", "/huge-declared"):
            declared = f"Content-Length: {2 * GIB}\r\n" if path == "/huge-declared" else ""
            sock.sendall(
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{declared}"
                "Connection: close\r\n\r\n".encode()
            )
            block = b"[" + b"1," * (MIB // 2 - 1) + b"1"
            for _ in range(2 * GIB // len(block)):
                sock.sendall(block)
        elif path == "/bomb":
            body = gzip_bomb()
            sock.sendall(
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip"
                f"\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            )
            sock.sendall(body)
        elif path == "/trickle-body":
            sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
            self._trickle(sock, b" " * 100)
        elif path == "/trickle-headers":
            self._trickle(sock, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        elif path.startswith("/api/v1/namespaces/") and query.get("watch"):
            namespace = path.split("/")[4]
            self.server.watch_versions.append(query.get("resourceVersion", ""))
            self._watch(sock, namespace, int(query.get("resourceVersion") or 0))
        else:
            sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")

    def _trickle(self, sock: socket.socket, data: bytes) -> None:
        for index in range(len(data)):
            sock.sendall(data[index : index + 1])
            if self.server.stopped.wait(TRICKLE):
                return

    def _watch(self, sock: socket.socket, behaviour: str, version: int) -> None:
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )

        def chunk(data: bytes) -> None:
            sock.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        if behaviour == "endless":
            chunk(b'{"type":"ADDED","object":{"metadata":{"name":"')
            block = b"a" * MIB
            while not self.server.stopped.is_set():
                chunk(block)
        elif behaviour == "always-garbage":
            chunk(b"<html>not a watch event</html>\n")
        elif behaviour == "garbage":
            if version < 10:
                chunk(_event("first", 10))
                chunk(b"\x00\x01 garbage, not an event\n")
                chunk(_event("lost", 11))  # after the bad line: never read on this connection
            else:
                chunk(_event(f"after-{version}", version + 1))
        chunk(b"")  # the end of the chunked body


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stopped = threading.Event()
        self.watch_versions: list[str] = []


class HostileServer:
    """The server, running in threads; a context manager."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def watch_versions(self) -> list[str]:
        return self._server.watch_versions

    def kubeconfig(self, folder: Path, user: dict[str, Any] | None = None) -> Path:
        """A kubeconfig for this server (the user: a token, unless given)."""
        return _kubeconfig(self.url, folder, user)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stopped.set()
        self._server.shutdown()
        self._server.server_close()


def _kubeconfig(url: str, folder: Path, user: dict[str, Any] | None) -> Path:
    path = folder / "hostile-kubeconfig"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hostile", "cluster": {"server": url}}],
        "users": [{"name": "someone", "user": user or {"token": "t0ken"}}],
        "contexts": [{"name": "hostile", "context": {"cluster": "hostile", "user": "someone"}}],
        "current-context": "hostile",
    }
    path.write_text(json.dumps(document))
    return path


class HostileServerProcess:
    """The same server in a child process; a context manager."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, __file__], stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None
        self.url = self._process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def kubeconfig(self, folder: Path, user: dict[str, Any] | None = None) -> Path:
        return _kubeconfig(self.url, folder, user)

    def __enter__(self) -> HostileServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self._process.terminate()
        self._process.wait(timeout=30)


if __name__ == "__main__":
    gzip_bomb()  # made before the URL is printed, so before any client starts a clock
    with HostileServer() as served:
        print(served.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            served._server.stopped.wait()
