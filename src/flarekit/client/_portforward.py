"""A local TCP port relayed to a pod's port through the API server, as `kubectl port-forward`.

Why: a Ray head that no Route or Ingress exposes is still reachable by anyone who may
`create pods/portforward` in its namespace: the API server hands the stream to the pod's
node, whose container runtime connects to the port inside the pod's network namespace. So
nothing needs exposing, and the `Client`'s own credentials and TLS are all it takes.

The protocol is the WebSocket one the kubelet and containerd's streaming server speak
(``v4.channel.k8s.io``; the API server passes the upgrade through to the node). One
WebSocket carries one TCP connection to one port, in two channels: each binary message
starts with its channel's number, 0 for the data and 1 for errors. The server's first
message on each channel is just the port number (two bytes, little-endian), which says the
stream is set up; after that, data flows both ways on channel 0 and channel 1 carries the
text of an error (the pod's port refused the connection, say). The client sends data on
channel 0 without the port. The protocol has no half-close: when the local side ends its
connection, the stream ends both ways (as `kubectl port-forward` over WebSockets does).

`websocket-client` does the WebSocket framing and handshake: it is installed with the
official client already (which uses it for exec), it takes the same `ssl.SSLContext`
as every other request, and its blocking sockets suit one relay thread per direction; a
sans-I/O library (wsproto) would leave the socket, TLS and proxy handling to be written here.

Each accepted connection gets a WebSocket of its own, so connections never wait on each
other. The listening socket is bound to 127.0.0.1 unless told otherwise. `close()` (or
leaving the ``with`` block) stops accepting, ends every relayed connection and joins every
thread the forward started: nothing is left behind.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from flarekit.client._errors import ApiError, NotFound, Operation

if TYPE_CHECKING:
    from websocket import WebSocket

    from flarekit.client._transport import Transport

__all__ = ["PortForward", "PortForwardError", "Stream", "open_stream"]

logger = logging.getLogger("flarekit.client")

#: The WebSocket subprotocol of the channel framing (binary, version 4).
PROTOCOL = "v4.channel.k8s.io"
DATA_CHANNEL = 0
ERROR_CHANNEL = 1
_CHUNK = 64 * 1024
#: How long `close()` waits for one relay thread to end after its sockets were shut.
JOIN_TIMEOUT = 5.0


class PortForwardError(OSError):
    """A stream to the pod's port failed after the API server accepted it: the node's text
    (the port refused the connection, the pod is gone), or a protocol violation."""


def _check_port(port: object, what: str, *, allow_zero: bool = False) -> int:
    if isinstance(port, bool) or not isinstance(port, int):
        raise ValueError(f"{what} must be an int, got {port!r}")
    low = 0 if allow_zero else 1
    if not low <= port <= 65535:
        allowed = "0 (any free port) to 65535" if allow_zero else "1 to 65535"
        raise ValueError(f"{what} must be {allowed}, got {port}")
    return port


def _operation(namespace: str, pod: str) -> Operation:
    return Operation("create", "pods/portforward", pod, namespace)


def _path(namespace: str, pod: str) -> str:
    quote = urllib.parse.quote
    return f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(pod, safe='')}/portforward"


@dataclass(eq=False)
class Stream:
    """One TCP connection to a pod's port, over one WebSocket (see the module docstring)."""

    socket: WebSocket
    port: int
    _seen: tuple[bool, bool] = (False, False)

    def send(self, data: bytes) -> None:
        """Send `data` to the pod's port."""
        self.socket.send_binary(bytes([DATA_CHANNEL]) + data)

    def receive(self) -> bytes:
        """The next bytes from the pod's port; b"" when the stream ended. An error the node
        sends on the error channel is raised as `PortForwardError`."""
        import websocket

        while True:
            try:
                opcode, message = self.socket.recv_data()
            except websocket.WebSocketConnectionClosedException:
                return b""
            if opcode == websocket.ABNF.OPCODE_CLOSE:
                return b""
            if opcode not in (websocket.ABNF.OPCODE_BINARY, websocket.ABNF.OPCODE_TEXT):
                continue
            if isinstance(message, str):
                message = message.encode()
            if not message:
                continue
            channel, payload = message[0], message[1:]
            if channel not in (DATA_CHANNEL, ERROR_CHANNEL):
                raise PortForwardError(f"the server sent on channel {channel}, not 0 or 1")
            if not self._seen[channel]:  # the first message of a channel: the port number
                payload = self._take_port(channel, payload)
            if channel == ERROR_CHANNEL:
                if payload:
                    text = payload.decode("utf-8", "replace").strip()
                    raise PortForwardError(f"port {self.port}: {text}")
                continue
            if payload:
                return bytes(payload)

    def _take_port(self, channel: int, payload: bytes) -> bytes:
        if len(payload) < 2:
            raise PortForwardError(f"the first message of channel {channel} has no port number")
        port = int.from_bytes(payload[:2], "little")
        if port != self.port:
            raise PortForwardError(f"the server set up port {port}, not {self.port}")
        seen = list(self._seen)
        seen[channel] = True
        self._seen = (seen[0], seen[1])
        return payload[2:]

    def close(self) -> None:
        """End the stream (the node closes its connection to the pod's port); a thread
        blocked reading it wakes up."""
        raw = self.socket.sock
        if raw is not None:
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)
            raw.close()


def open_stream(transport: Transport, namespace: str, pod: str, port: int) -> Stream:
    """A new connection to `port` of `pod`, through the API server's ``pods/portforward``."""
    _check_port(port, "the pod's port")
    try:
        socket_ = transport.open_websocket(
            _operation(namespace, pod),
            _path(namespace, pod),
            query=(("ports", str(port)),),
            subprotocols=(PROTOCOL,),
        )
    except NotFound as exc:
        if not exc.status.get("details"):  # not the pod: the path itself is not served
            exc.add_note(
                f"the API server at {transport.server} does not serve pods/portforward: it "
                "runs no containers (FakeCluster offers no port-forward; a cluster with "
                "nodes, or ControlPlane(kubelet=True), does)"
            )
        raise
    return Stream(socket_, port)


class PortForward:
    """A local port whose every accepted connection is relayed to `port` of a pod.

    Use it as a context manager (``with client.port_forward("ns", "pod", 10001) as local:``)
    or call `start()` and `close()`; `local_port` is the port it listens on (a free one when
    `local_port` was 0). `start()` opens one stream and closes it again, so that a pod that
    does not exist, a missing permission, or a server that offers no port-forwarding fails
    there, not at the first connection. Errors of later streams are logged (WARNING, logger
    ``flarekit.client``) and kept in `errors`; their local connection is closed.
    """

    def __init__(
        self,
        transport: Transport,
        namespace: str,
        pod: str,
        port: int,
        *,
        local_port: int = 0,
        address: str = "127.0.0.1",
    ) -> None:
        self.namespace = namespace
        self.pod = pod
        self.port = _check_port(port, "the pod's port")
        self.address = address
        self._requested = _check_port(local_port, "local_port", allow_zero=True)
        self._transport = transport
        self._listener: socket.socket | None = None
        self._local_port = 0
        self._wake: tuple[socket.socket, socket.socket] | None = None
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._open: set[tuple[socket.socket, Stream]] = set()
        self._closed = False
        #: Errors of streams after `start()`, newest last (at most 100 kept).
        self.errors: list[BaseException] = []
        #: Seconds the check stream in `start()` took to set up.
        self.setup_seconds: float | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def local_port(self) -> int:
        """The port it listens on (0 before `start()`; kept after `close()`)."""
        return self._local_port

    def __repr__(self) -> str:
        where = f"{self.address}:{self.local_port}" if self._listener else "not started"
        return f"<PortForward {where} -> pod {self.namespace}/{self.pod}:{self.port}>"

    def start(self) -> PortForward:
        """Check one stream, then listen and relay; returns self."""
        if self._closed:
            raise RuntimeError("a closed port forward cannot be started again")
        if self._listener is not None:
            return self
        started = time.monotonic()
        check = open_stream(self._transport, self.namespace, self.pod, self.port)
        try:
            check.socket.settimeout(self._transport.timeout)
            _await_setup(check)
        finally:
            check.close()
        self.setup_seconds = time.monotonic() - started
        listener = socket.socket(socket.AF_INET6 if ":" in self.address else socket.AF_INET)
        try:
            listener.bind((self.address, self._requested))
            listener.listen(16)
        except OSError:
            listener.close()
            raise
        self._listener = listener
        self._local_port = int(listener.getsockname()[1])
        self._wake = socket.socketpair()
        self._spawn(self._accept, "accept")
        return self

    def __enter__(self) -> PortForward:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _spawn(self, target: Any, what: str, *args: Any) -> None:
        thread = threading.Thread(
            target=self._run,
            args=(target, *args),
            name=f"flarekit-port-forward-{self.pod}-{self.port}-{what}",
            daemon=True,
        )
        with self._lock:
            self._threads.add(thread)
        thread.start()

    def _run(self, target: Any, *args: Any) -> None:
        try:
            target(*args)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _accept(self) -> None:
        assert self._listener is not None and self._wake is not None
        wake = self._wake[0]
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(wake, selectors.EVENT_READ)
            while not self._closed:
                for key, _ in selector.select():
                    if key.fileobj is wake or self._closed:
                        return
                    try:
                        connection, _peer = self._listener.accept()
                    except OSError:
                        continue
                    self._spawn(self._serve, "connection", connection)

    def _serve(self, connection: socket.socket) -> None:
        """Relay one local connection: this thread carries the pod's answers, a second one
        what the local side sends."""
        try:
            stream = open_stream(self._transport, self.namespace, self.pod, self.port)
        except (ApiError, OSError) as exc:
            self._record(exc)
            connection.close()
            return
        pair = (connection, stream)
        with self._lock:
            if self._closed:
                stream.close()
                connection.close()
                return
            self._open.add(pair)
        self._spawn(self._upload, "upload", connection, stream)
        try:
            while True:
                data = stream.receive()
                if not data:
                    break
                connection.sendall(data)
        except Exception as exc:  # the node's error, a lost connection, a protocol error
            if not self._closed:
                self._record(exc)
        finally:
            self._end(pair)

    def _upload(self, connection: socket.socket, stream: Stream) -> None:
        try:
            while True:
                data = connection.recv(_CHUNK)
                if not data:
                    break
                stream.send(data)
        except Exception:  # either side went away: the stream ends
            pass
        finally:
            self._end((connection, stream))

    def _end(self, pair: tuple[socket.socket, Stream]) -> None:
        connection, stream = pair
        stream.close()
        with contextlib.suppress(OSError):
            connection.shutdown(socket.SHUT_RDWR)
        connection.close()
        with self._lock:
            self._open.discard(pair)

    def _record(self, exc: BaseException) -> None:
        logger.warning(
            "port forward to pod %s/%s port %d: %s", self.namespace, self.pod, self.port, exc
        )
        with self._lock:
            self.errors.append(exc)
            del self.errors[:-100]

    def close(self) -> None:
        """Stop listening, end every relayed connection, and wait for every thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pairs = list(self._open)
        if self._wake is not None:
            with contextlib.suppress(OSError):
                self._wake[1].send(b"x")
        for pair in pairs:
            self._end(pair)
        deadline = time.monotonic() + JOIN_TIMEOUT
        while True:
            with self._lock:
                threads = [t for t in self._threads if t is not threading.current_thread()]
            if not threads or time.monotonic() > deadline:
                break
            threads[0].join(max(0.0, deadline - time.monotonic()))
        if self._listener is not None:
            self._listener.close()
        for end in self._wake or ():
            end.close()


def _await_setup(stream: Stream) -> None:
    """Wait until the server said the port on both channels (the stream is set up), or
    raise what it said instead."""
    import websocket

    while not all(stream._seen):
        try:
            opcode, message = stream.socket.recv_data()
        except websocket.WebSocketTimeoutException:
            raise PortForwardError("the server did not set up the stream in time") from None
        except websocket.WebSocketConnectionClosedException:
            raise PortForwardError("the server closed the stream before setting it up") from None
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            raise PortForwardError("the server closed the stream before setting it up")
        if isinstance(message, str):
            message = message.encode()
        if not message or message[0] not in (DATA_CHANNEL, ERROR_CHANNEL):
            raise PortForwardError("the server sent something else than a port number")
        channel, payload = message[0], message[1:]
        if stream._seen[channel]:
            if channel == ERROR_CHANNEL and payload:
                text = payload.decode("utf-8", "replace").strip()
                raise PortForwardError(f"port {stream.port}: {text}")
            continue
        stream._take_port(channel, payload)
