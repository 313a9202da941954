"""The HTTPS front end: parse, authenticate, inject faults, route, authorize, answer, log.

Built on the standard library's ThreadingHTTPServer (one thread per connection, HTTP/1.1
keep-alive). Watches stream newline-delimited JSON events in chunked transfer encoding, as
kube-apiserver does, until `timeoutSeconds`, the client leaving, or `drop_watches()`. Pod
logs are plain text; followed logs are chunked, a line per chunk.
"""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import ssl
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from flarekit_testing.apiserver import (
    _crd_api,
    _errors,
    _logs,
    _nonresource,
    _reads,
    _reviews,
    _routing,
    _tables,
)
from flarekit_testing.apiserver._auth import Attributes, Policy
from flarekit_testing.apiserver._faults import Faults, RecordedRequest, RequestLog
from flarekit_testing.apiserver._request import Request, Response, decode_body, present
from flarekit_testing.apiserver._resources import Registry
from flarekit_testing.apiserver._routing import Route
from flarekit_testing.apiserver._store import BOOKMARK, CLOSED, INITIAL_EVENTS_END, Store

JSON = dict[str, Any]

DEFAULT_WATCH_TIMEOUT = 1800.0


@dataclass
class Backend:
    """Everything a request handler needs, shared by all connections."""

    registry: Registry
    store: Store
    policy: Policy
    faults: Faults
    log: RequestLog
    bookmark_interval: float
    logs: _logs.LogStore
    address: str = ""
    after_write: Callable[[], None] | None = None
    #: The CRDs served read-only at /apis/apiextensions.k8s.io/v1, by name.
    crds: dict[str, JSON] = field(default_factory=dict)


def _escape_warning(text: str) -> str:
    """A `Warning` header value as kube-apiserver sends it: the text in UTF-8 bytes (Go writes
    header values as they are). `http.server` writes header values as Latin-1, so the UTF-8
    bytes are handed to it as the Latin-1 characters of the same bytes."""
    value = '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value.encode("utf-8", "surrogatepass").decode("latin-1")


#: kube-apiserver's limit on a request body (`MaxRequestBodyBytes`): beyond it, 413.
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, backend: Backend, context: ssl.SSLContext) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.backend = backend
        self.context = context

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = super().get_request()
        # Headers and body go out in separate writes; without NODELAY, Nagle's algorithm and
        # the client's delayed ACK add ~40 ms to every keep-alive request.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # The TLS handshake runs on first read, in the connection's own thread.
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that drop connections (or fail TLS) are expected in tests


def make_server(backend: Backend, context: ssl.SSLContext) -> ThreadingHTTPServer:
    return _Server(backend, context)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- entry points -------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    # -- plumbing -----------------------------------------------------------------------------

    def _serve(self) -> None:
        backend = self.server.backend
        url = urllib.parse.urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BODY_BYTES:
            self._refuse_body(length)
            return
        body = self.rfile.read(length) if length else b""
        content_type = self.headers.get("Content-Type") or ""
        incoming = RecordedRequest(
            self.command, path, query, 0, None, content_type or None, self.headers.get("User-Agent")
        )
        user: str | None = None
        try:
            delay, fault = backend.faults.take(incoming)
            if delay:
                time.sleep(delay)
            if fault is not None:
                raise _errors.injected(fault.status, fault.retry_after)
            if _nonresource.is_public(path) and path != "/version":
                code, text = _nonresource.health(path, query)
                self._record(incoming, code, user)
                self._send_text(code, text)
                return
            if path != "/version":
                user = backend.policy.authenticate(self.headers.get("Authorization"))
            route = _routing.resolve(
                backend.registry,
                self.command,
                path,
                query,
                body,
                content_type,
                self.headers.get("User-Agent") or "",
            )
            if route is None and _crd_api.is_crd_path(path):
                assert user is not None
                response = _crd_api.serve(
                    backend.crds, backend.policy, user, self.command, path, query
                )
                if _tables.wants_table(self.headers.get("Accept") or ""):
                    response.body = _crd_api.as_table(response.body, query)
            elif route is None:
                response = _nonresource.serve(
                    backend.registry,
                    backend.address,
                    self.command,
                    path,
                    self.headers.get("Accept") or "",
                )
            else:
                assert user is not None
                answered = self._resource(route, user, incoming)
                if answered is None:
                    return
                response = answered
        except _errors.ApiError as exc:
            self._record(incoming, exc.code, user)
            if exc.reason == _errors.PAGE_NOT_FOUND:
                self._send_text(404, "404 page not found\n")
                return
            self._send(exc.code, exc.status(), [], exc.headers)
            return
        except RecursionError:
            # The API server takes objects nested up to 10,000 levels; FakeCluster's code
            # follows them recursively, as far as Python's recursion limit lets it.
            too_deep = _errors.ApiError(
                500,
                "InternalError",
                "FakeCluster cannot follow an object nested this deep (Python's recursion "
                f"limit, {sys.getrecursionlimit()}); the real API server takes up to 10,000 "
                "levels",
            )
            self._record(incoming, too_deep.code, user)
            self._send(too_deep.code, too_deep.status(), [], too_deep.headers)
            return
        self._record(incoming, response.code, user)
        headers = {"Vary": response.vary} if response.vary else None
        self._send(response.code, response.body, response.warnings, headers, response.content_type)

    def _resource(self, route: Route, user: str, incoming: RecordedRequest) -> Response | None:
        """Authorize and answer a resource request; None when it was streamed already."""
        backend = self.server.backend
        req = route.request
        req.user = user
        backend.policy.authorize(
            Attributes(
                user,
                route.verb,
                req.rt.group,
                req.rt.plural,
                req.subresource,
                req.namespace if req.rt.namespaced else "",
                req.name,
            )
        )
        if route.verb == "watch":
            self._record(incoming, 200, user)
            self._watch(req)
            return None
        if req.subresource == "log":
            reply = _logs.open_log(backend.store, backend.logs, req)
            self._record(incoming, 200, user)
            self._send_log(reply)
            return None
        if _reviews.is_review(req.rt):
            doc = decode_body(req)
            answer = _reviews.answer(
                backend.policy, user, req.rt, doc, req.manager, req.api_version
            )
            return Response(201, answer)
        response = _routing.dispatch(backend.store, route)
        if route.verb not in ("get", "list") and backend.after_write is not None:
            backend.after_write()
        if route.verb in ("get", "list") and _tables.wants_table(self.headers.get("Accept") or ""):
            response.body = _tables.as_table(req.rt, req.version.name, response.body, req.query)
        return response

    def _record(self, incoming: RecordedRequest, status: int, user: str | None) -> None:
        self.server.backend.log.add(
            RecordedRequest(
                incoming.method,
                incoming.path,
                incoming.query,
                status,
                user,
                incoming.content_type,
                incoming.user_agent,
            )
        )

    def _refuse_body(self, length: int) -> None:
        """413 for a body beyond kube-apiserver's request limit (read and dropped first, so
        that a client still sending it reads the answer)."""
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 20))
            if not chunk:
                break
            length -= len(chunk)
        error = _errors.ApiError(
            413,
            "RequestEntityTooLarge",
            f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}",
        )
        url = urllib.parse.urlsplit(self.path)
        incoming = RecordedRequest(
            self.command,
            url.path.rstrip("/") or "/",
            urllib.parse.parse_qs(url.query, keep_blank_values=True),
            0,
            None,
            self.headers.get("Content-Type") or None,
            self.headers.get("User-Agent"),
        )
        self._record(incoming, 413, None)
        self._send(413, error.status(), [])

    def _send_text(self, code: int, text: str) -> None:
        data = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send(
        self,
        code: int,
        body: JSON,
        warnings: list[str],
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache, private")
        for warning in warnings:
            self.send_header("Warning", _escape_warning(warning))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    # -- watch --------------------------------------------------------------------------------

    def _chunk(self, event: JSON) -> None:
        data = json.dumps(event, separators=(",", ":")).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _watch(self, req: Request) -> None:
        backend = self.server.backend
        plan = _reads.open_watch(backend.store, req)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        for warning in plan.warnings:
            self.send_header("Warning", _escape_warning(warning))
        self.end_headers()
        self.wfile.flush()
        if plan.watcher is None:
            assert plan.error is not None
            self._chunk({"type": "ERROR", "object": plan.error.status()})
            self._end_chunks()
            return
        watcher = plan.watcher
        timeout = DEFAULT_WATCH_TIMEOUT if plan.timeout is None else float(plan.timeout)
        deadline = time.monotonic() + timeout
        interval = backend.bookmark_interval
        next_bookmark = time.monotonic() + interval
        # kube-apiserver also sends bookmarks in the last two seconds before a watch times out
        # (its watch cache looks each second), when the resource type moved on since the watch
        # began or the last bookmark, so that the client can resume from there.
        partings = [t for t in (deadline - 2.0, deadline - 1.0) if t > time.monotonic()]
        marked = watcher.type_rv
        tables = _tables.wants_table(self.headers.get("Accept") or "")
        first = True
        try:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    self._end_chunks()
                    return
                wait = deadline - now
                if plan.bookmarks:
                    wait = min(wait, max(0.0, next_bookmark - now), *(t - now for t in partings))
                try:
                    kind, payload = watcher.queue.get(timeout=max(0.0, wait))
                except queue.Empty:
                    now = time.monotonic()
                    if plan.bookmarks and now >= next_bookmark:
                        backend.store.bookmark(watcher)
                        next_bookmark = now + interval
                    if plan.bookmarks and partings and now >= partings[0]:
                        partings.pop(0)
                        if watcher.type_rv > marked:
                            marked = watcher.type_rv
                            backend.store.bookmark(watcher)
                    continue
                if kind == CLOSED:
                    self._drop()
                    return
                if kind in (BOOKMARK, INITIAL_EVENTS_END):
                    obj: JSON = {
                        "kind": req.rt.kind,
                        "apiVersion": req.api_version,
                        "metadata": {"resourceVersion": str(payload)},
                    }
                    if kind == INITIAL_EVENTS_END:
                        obj["metadata"]["annotations"] = {"k8s.io/initial-events-end": "true"}
                        kind = BOOKMARK
                else:
                    assert isinstance(payload, dict)
                    obj = present(payload, req.rt, req.version.name)
                if tables:
                    version = req.version.name
                    obj = _tables.watch_event_table(req.rt, version, obj, req.query, first)
                    first = False
                self._chunk({"type": kind, "object": obj})
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            backend.store.unwatch(watcher)

    # -- logs ---------------------------------------------------------------------------------

    def _send_log(self, reply: _logs.LogReply) -> None:
        """Plain text as the kubelet gives it; with `follow`, chunks until the container ends,
        the client leaves, or the test drops log streams (then the connection just breaks)."""
        budget = reply.limit
        head = b"".join(reply.head)
        if budget is not None:
            head, budget = head[:budget], budget - len(head[:budget])
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Cache-Control", "no-cache, private")
        if reply.later is None:
            self.send_header("Content-Length", str(len(head)))
            self.end_headers()
            self.wfile.write(head)
            self.wfile.flush()
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if head:
                self._raw_chunk(head)
            for data in reply.later if budget != 0 else ():
                if budget is not None:
                    data, budget = data[:budget], budget - len(data[:budget])
                self._raw_chunk(data)
                if budget == 0:
                    break
            self._end_chunks()
        except _logs.Dropped:
            self._drop()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            close = getattr(reply.later, "close", None)
            if close is not None:
                close()

    def _raw_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Close the connection without ending the chunked stream, like a dying server."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
