"""The real node's namespaces: a network namespace and a mount namespace of its own.

Everything of the node (containerd, kubelet, kube-proxy, CoreDNS, and through containerd
every pod's own network namespace) lives in one network namespace and one mount namespace
that this script makes, as `kind` makes a container for each node. Nothing is routed beyond
them, and nothing of the host's network changes: the node reaches the API server, and the API
server the node, only through Unix sockets in the control plane's directory, which a
filesystem path names whatever the network namespace.

Two processes:

- *outside* (`python _nodenet.py outside SPEC`), in the host's namespaces: listens on
  `api.sock` and connects each client to the API server on the host's `127.0.0.1:<port>`;
  starts the inside through `unshare --net --mount` and lives as long as it does.
- *inside*: prepares the namespaces, then serves:
  - the network: loopback up; an interface `eth0` with the node's address and the default
    route, one end of a veth pair whose other end stays down and unconnected (what the node
    sends beyond itself is dropped: nothing leaves); IP forwarding on (pods reach Services
    through the node); the bridge and the pods' interfaces are made later by the bridge CNI
    plugin;
  - the mounts: fresh tmpfs on /run and /var/log, an overlay on /var/lib whose writes land
    in the node's folder, and /etc/resolv.conf pointing at the cluster DNS, so that no
    program of the node writes beside the control plane's directory, and every mount the
    node makes (container root file systems, volumes, the pods' network namespaces) goes
    away with the namespace;
  - `<node address>:<port>` (and `127.0.0.1:<port>` there), which leads to `api.sock`: the
    API server seen from the node, where the kubelet, kube-proxy and CoreDNS reach it, and
    the `kubernetes` Service's endpoint, where the pods reach it;
  - `tunnel.sock`, an HTTP CONNECT proxy into the node's network: the API server's egress
    to the cluster (kubelet's port for logs, exec and port-forward; pods and Services for
    its proxy), and the control plane's own checks;
  - `http-proxy`'s port on the host (when the spec names one): a plain HTTP proxy for
    operators that call into the cluster over HTTP (KubeRay asks each Ray head's dashboard
    about its jobs), as the same requests from a pod would go.

The inside writes its process id to `holder.pid` once it is ready: the node's programs join
its namespaces with `nsenter --target <pid> --net --mount`. Stopping the outside's process
group stops both; the namespaces go when their last process does. Standard library only: it
runs as a script.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_MS_BIND = 4096


@dataclass(frozen=True)
class NodeNetwork:
    """What the node's namespaces are made with."""

    directory: str  # the node's folder (sockets, the /var/lib overlay, resolv.conf)
    apiserver_port: int  # on the host's loopback, and the same port in the node
    node_address: str  # the dummy interface's address, the node's InternalIP
    prefix_length: int
    http_proxy_port: int = 0  # on the host's loopback; 0: none

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)))

    @classmethod
    def read(cls, path: Path) -> NodeNetwork:
        return cls(**json.loads(path.read_text()))

    @property
    def folder(self) -> Path:
        return Path(self.directory)

    @property
    def api_socket(self) -> Path:
        return self.folder / "api.sock"

    @property
    def tunnel_socket(self) -> Path:
        return self.folder / "tunnel.sock"

    @property
    def holder_pid_file(self) -> Path:
        return self.folder / "holder.pid"

    @property
    def resolv_conf(self) -> Path:
        return self.folder / "resolv.conf"


def launcher_argv(spec_path: Path) -> list[str]:
    """The command that makes the node's namespaces (this file as a script)."""
    return [sys.executable, "-I", __file__, "outside", str(spec_path)]


# -- both sides ------------------------------------------------------------------------------


def _die_with_parent() -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _splice(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides are done, then close both."""

    def run() -> None:
        other = threading.Thread(target=_pipe, args=(b, a), daemon=True)
        other.start()
        _pipe(a, b)
        other.join()
        a.close()
        b.close()

    threading.Thread(target=run, daemon=True).start()


def _serve(listener: socket.socket, handle: Any) -> None:
    def loop() -> None:
        while True:
            try:
                client, _address = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(client,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()


def _unix_listener(path: Path) -> socket.socket:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    path.chmod(0o600)
    listener.listen(128)
    return listener


def _tcp_listener(address: str, port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(128)
    return listener


def _connect_unix(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    return sock


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    """An HTTP request's head (up to the blank line) and whatever came after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the request's head ended")
        data += chunk
        if len(data) > 1 << 20:
            raise ConnectionError("request head too long")
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


# -- outside (host side) ---------------------------------------------------------------------


def _outside(spec: NodeNetwork, spec_path: Path) -> int:
    def to_apiserver(client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", spec.apiserver_port), timeout=10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        _splice(client, upstream)

    _serve(_unix_listener(spec.api_socket), to_apiserver)
    if spec.http_proxy_port:
        _serve(_tcp_listener("127.0.0.1", spec.http_proxy_port), lambda c: _http_proxy(spec, c))
    unshare = ["unshare", "--net", "--mount", "--propagation", "private"]
    inside = subprocess.Popen(
        [*unshare, sys.executable, "-I", __file__, "inside", str(spec_path)],
        preexec_fn=_die_with_parent,
    )
    signal.signal(signal.SIGTERM, lambda *_: inside.terminate())
    return inside.wait()


def _http_proxy(spec: NodeNetwork, client: socket.socket) -> None:
    """One plain-HTTP proxy connection: `GET http://host:port/path` becomes `GET /path` sent
    to host:port inside the node (through the tunnel). One request per connection."""
    try:
        head, rest = _read_head(client)
        request_line, _, headers = head.partition(b"\r\n")
        method, target, version = request_line.split(b" ", 2)
        if not target.startswith(b"http://"):
            raise ValueError("only plain http:// targets")
        authority, _, path = target[len(b"http://") :].partition(b"/")
        if b":" not in authority:
            authority += b":80"
        upstream = _connect_unix(spec.tunnel_socket)
        upstream.sendall(b"CONNECT " + authority + b" HTTP/1.1\r\n\r\n")
        answer, early = _read_head(upstream)
        if answer.split(b"\r\n", 1)[0].split(b" ")[1:2] != [b"200"]:
            client.sendall(answer + b"\r\n\r\n" + early)
            client.close()
            upstream.close()
            return
        kept = [
            line
            for line in headers.split(b"\r\n")
            if line and not line.lower().startswith((b"proxy-", b"connection:"))
        ]
        kept.append(b"Connection: close")
        upstream.sendall(
            b" ".join([method, b"/" + path, version]) + b"\r\n" + b"\r\n".join(kept) + b"\r\n\r\n"
        )
        if rest:
            upstream.sendall(rest)
    except (OSError, ValueError, ConnectionError) as exc:
        with contextlib.suppress(OSError):
            body = f"flarekit node proxy: {exc}\n".encode()
            client.sendall(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\nConnection: close\r\n\r\n"
                + body
            )
        client.close()
        return
    _splice(client, upstream)


# -- inside (the node's namespaces) ----------------------------------------------------------


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    result = libc.mount(
        source.encode(),
        target.encode(),
        fstype.encode() if fstype else None,
        flags,
        data.encode() if data else None,
    )
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source} on {target}: {os.strerror(errno)}")


def _prepare_mounts(spec: NodeNetwork) -> None:
    _mount("tmpfs", "/run", "tmpfs", 0, "mode=755")
    _mount("tmpfs", "/var/log", "tmpfs", 0, "mode=755")
    lib = spec.folder / "var-lib"
    (lib / "upper").mkdir(parents=True, exist_ok=True)
    (lib / "work").mkdir(parents=True, exist_ok=True)
    _mount(
        "overlay",
        "/var/lib",
        "overlay",
        0,
        f"lowerdir=/var/lib,upperdir={lib / 'upper'},workdir={lib / 'work'}",
    )
    _mount(str(spec.resolv_conf), "/etc/resolv.conf", None, _MS_BIND, None)


def _prepare_network(spec: NodeNetwork) -> None:
    _run("ip", "link", "set", "lo", "up")
    _run("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0-end")
    _run("ip", "addr", "add", f"{spec.node_address}/{spec.prefix_length}", "dev", "eth0")
    _run("ip", "link", "set", "eth0", "up")
    _run("ip", "route", "add", "default", "dev", "eth0")
    Path("/proc/sys/net/ipv4/ip_forward").write_text("1\n")
    bridge_calls_iptables = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")
    if bridge_calls_iptables.exists():  # per network namespace: only this node's
        bridge_calls_iptables.write_text("1\n")


def _tunnel(client: socket.socket) -> None:
    """One CONNECT request: connect to its target inside the node, then copy bytes."""
    try:
        head, rest = _read_head(client)
        words = head.split(b"\r\n", 1)[0].split(b" ")
        if len(words) < 2 or words[0] != b"CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\n\r\n")
            client.close()
            return
        host, _, port = words[1].decode().rpartition(":")
        upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        upstream.settimeout(None)
    except (OSError, ValueError, ConnectionError) as exc:
        with contextlib.suppress(OSError):
            reason = str(exc).replace("\r", " ").replace("\n", " ")[:200]
            client.sendall(f"HTTP/1.1 502 {reason}\r\nConnection: close\r\n\r\n".encode())
        client.close()
        return
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    if rest:
        upstream.sendall(rest)
    _splice(client, upstream)


def _inside(spec: NodeNetwork) -> int:
    _die_with_parent()
    _prepare_mounts(spec)
    _prepare_network(spec)

    def to_apiserver(client: socket.socket) -> None:
        try:
            upstream = _connect_unix(spec.api_socket)
        except OSError:
            client.close()
            return
        _splice(client, upstream)

    for address in ("127.0.0.1", spec.node_address):
        _serve(_tcp_listener(address, spec.apiserver_port), to_apiserver)
    _serve(_unix_listener(spec.tunnel_socket), _tunnel)
    spec.holder_pid_file.write_text(f"{os.getpid()}\n")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    return 0


def main(argv: Sequence[str]) -> int:
    mode, spec_path = argv[0], Path(argv[1])
    spec = NodeNetwork.read(spec_path)
    if mode == "inside":
        return _inside(spec)
    return _outside(spec, spec_path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
