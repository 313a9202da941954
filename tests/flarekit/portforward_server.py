"""A small API server that answers ``pods/<name>/portforward`` as a node's streaming server
does (the ``v4.channel.k8s.io`` WebSocket framing, written here with wsproto), so the client's
framing is tested against an implementation it does not share code with.

The pod decides what the "pod's port" does: ``echo`` sends back what it gets, ``refused``
reports on the error channel that the port refused the connection (as the kubelet words it),
``missing`` is a pod that does not exist (404 with a Status, the upgrade refused), and
``wrongport`` sets up another port than the one asked for.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Ping,
    RejectConnection,
    RejectData,
    Request,
)

PROTOCOL = "v4.channel.k8s.io"


@dataclass
class Seen:
    """One WebSocket request the server received."""

    target: str
    headers: dict[str, str]
    subprotocols: list[str]


@dataclass
class State:
    seen: list[Seen] = field(default_factory=list)
    open_streams: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        ws = WSConnection(ConnectionType.SERVER)
        mode = ""
        in_message = False
        counted = False
        try:
            while True:
                data = sock.recv(65536)
                ws.receive_data(data or None)
                for event in ws.events():
                    if isinstance(event, Request):
                        mode = self._accept(sock, ws, event)
                        if mode and not counted:
                            counted = True
                            with self.server.state.lock:
                                self.server.state.open_streams += 1
                    elif isinstance(event, BytesMessage):
                        payload = bytes(event.data)
                        if not in_message:
                            assert payload[0] == 0, "the client sends on the data channel"
                            payload = payload[1:]
                        in_message = not event.message_finished
                        if mode == "echo" and payload:
                            sock.sendall(ws.send(BytesMessage(data=b"\x00" + payload)))
                    elif isinstance(event, Ping):
                        sock.sendall(ws.send(event.response()))
                    elif isinstance(event, CloseConnection):
                        if ws.state is not ConnectionState.CLOSED:
                            sock.sendall(ws.send(event.response()))
                        return
                if not data or not mode:
                    return
        except OSError:
            return
        finally:
            if counted:
                with self.server.state.lock:
                    self.server.state.open_streams -= 1
            sock.close()

    def _accept(self, sock: socket.socket, ws: WSConnection, event: Request) -> str:
        """Answer the upgrade as the pod in the path would; what the stream then does."""
        headers = {k.decode().lower(): v.decode() for k, v in event.extra_headers}
        self.server.state.seen.append(Seen(event.target, headers, list(event.subprotocols)))
        path, _, query = event.target.partition("?")
        pod = path.split("/")[-2]
        port = int(urllib.parse.parse_qs(query)["ports"][0])
        if pod == "missing":
            status = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "message": 'pods "missing" not found',
                "reason": "NotFound",
                "details": {"name": "missing", "kind": "pods"},
                "code": 404,
            }
            body = json.dumps(status).encode()
            reject = RejectConnection(
                status_code=404,
                headers=[
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
                has_body=True,
            )
            sock.sendall(ws.send(reject) + ws.send(RejectData(data=body)))
            return ""
        sock.sendall(ws.send(AcceptConnection(subprotocol=PROTOCOL)))
        announced = port + 1 if pod == "wrongport" else port
        prefix = announced.to_bytes(2, "little")
        sock.sendall(ws.send(BytesMessage(data=b"\x00" + prefix)))
        sock.sendall(ws.send(BytesMessage(data=b"\x01" + prefix)))
        if pod == "refused":
            text = f"error forwarding port {port} to pod 0123, uid : connection refused"
            sock.sendall(ws.send(BytesMessage(data=b"\x01" + text.encode())))
            sock.sendall(ws.send(CloseConnection(code=1000)))
            return "refused"
        return "echo"


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = State()


class PortForwardServer:
    """The server, in threads; a context manager."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def state(self) -> State:
        return self._server.state

    def kubeconfig(self, folder: Path) -> Path:
        host, port = self._server.server_address[:2]
        path = folder / "portforward-kubeconfig"
        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "s", "cluster": {"server": f"http://{host}:{port}"}}],
            "users": [{"name": "u", "user": {"token": "t0ken"}}],
            "contexts": [{"name": "s", "context": {"cluster": "s", "user": "u"}}],
            "current-context": "s",
        }
        path.write_text(json.dumps(document))
        return path

    def __enter__(self) -> PortForwardServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
