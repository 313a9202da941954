"""A scripted stand-in for the Ray dashboard on 127.0.0.1, for unit tests of RayJobClient.

Tests register, per method and path, the replies the server gives in order (the last one
repeats), and read back every request it received. A reply can also drop the connection
without answering or hold it open, to exercise retries and timeouts.
"""

from __future__ import annotations

import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # JSON-encoded unless str/bytes
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False  # close the connection without answering
    hang: bool = False  # answer only when the server shuts down


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeDashboard:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.requests: list[Request] = []
        self._routes: dict[tuple[str, str], list[Reply]] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeDashboard:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def route(self, method: str, path: str, *replies: Reply) -> None:
        """Answer `method path` with `replies` in order; the last one repeats."""
        with self._lock:
            self._routes[(method, path)] = list(replies)

    def count(self, method: str | None = None, path: str | None = None) -> int:
        return sum(
            1
            for r in self.requests
            if (method is None or r.method == method) and (path is None or r.path == path)
        )

    def _next(self, method: str, path: str) -> Reply:
        with self._lock:
            replies = self._routes.get((method, path))
            if not replies:
                return Reply(404, "404: Not Found")
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with dashboard._lock:
                    dashboard.requests.append(
                        Request(self.command, self.path, dict(self.headers.items()), body)
                    )
                reply = dashboard._next(self.command, self.path)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                if reply.hang:
                    dashboard._closing.wait(10)
                data, headers = reply.body, dict(reply.headers)
                if isinstance(data, str):
                    data = data.encode()
                elif not isinstance(data, bytes):
                    data = json.dumps(data).encode()
                    headers.setdefault("Content-Type", "application/json")
                self.send_response(reply.status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _serve

        return Handler


def job(
    submission_id: str | None = "job-1", status: str = "RUNNING", **extra: Any
) -> dict[str, Any]:
    """A job as Ray 2.x reports it from GET /api/jobs/{id}."""
    return {
        "type": "SUBMISSION",
        "job_id": None,
        "submission_id": submission_id,
        "driver_info": None,
        "status": status,
        "entrypoint": "python train.py",
        "message": None,
        "error_type": None,
        "start_time": 1700000000000,
        "end_time": None,
        "metadata": None,
        "runtime_env": None,
        "driver_agent_http_address": None,
        "driver_node_id": None,
        "driver_exit_code": None,
        **extra,
    }
