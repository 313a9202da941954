"""Run an operator in a sandbox of its own: a private network namespace and a private /tmp.

Operators are written to run in a pod: several bind their webhook server (and some other
servers) on every interface at a fixed port, some write their webhook certificates to a
fixed path under /tmp, and some read their ServiceAccount's token and namespace where the
kubelet puts them (`/var/run/secrets/kubernetes.io/serviceaccount`). Run as plain processes
they would listen beyond loopback, collide with each other and with other control planes on
the same machine, and leave files in /tmp. So each operator runs in its own network
namespace (only a loopback interface: whatever it binds is reachable from nowhere else) and
mount namespace (fresh tmpfs on /tmp and /run, with the control plane's own directory mounted
back in, and the files the spec gives put there as a pod's volumes would put them).

Its connections cross the boundary only where the control plane says, as TCP relays:

- *outbound*: the sandbox's `127.0.0.1:<port>` leads to the host's `127.0.0.1:<host port>`
  (the API server, at the same port, so the operator's kubeconfig is the host's);
- *inbound*: the host's `127.0.0.1:<host port>` leads to the sandbox's `127.0.0.1:<port>`
  (the operator's webhook server and health probes).

Two processes do this. The *launcher* (`python -m flarekit_testing.controlplane._sandbox SPEC`) stays
in the host's namespaces: it listens on the inbound host ports and connects to the outbound
host ports. It starts the *inside* process through `unshare --net --mount` (with
`--user --map-root-user` when not root), which brings the loopback interface up, mounts the
private /tmp, listens on the outbound ports, connects to the inbound ports, and starts the
operator. The two pass connected sockets to each other over a socket pair (`SCM_RIGHTS`);
the launcher copies the bytes. Every process is in the launcher's process group and dies
with its parent, so stopping the launcher's group stops everything.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_MS_BIND, _MS_REC = 4096, 16384
_PR_SET_PDEATHSIG = 1
_CHANNEL_FD_ENV = "FLAREKIT_SANDBOX_CHANNEL_FD"


class SandboxUnavailable(RuntimeError):
    """This machine cannot make the namespaces an operator's sandbox needs."""


@dataclass(frozen=True)
class Relay:
    """A TCP port on one side of the boundary that leads to a port on the other side."""

    port: int  # inside the sandbox
    host_port: int  # on the host's loopback


@dataclass(frozen=True)
class Spec:
    """What to run in the sandbox and which ports cross its boundary."""

    argv: list[str]
    env: dict[str, str]
    keep: list[str]  # directories under a private folder that stay visible inside
    outbound: list[Relay] = field(default_factory=list)
    inbound: list[Relay] = field(default_factory=list)
    #: Files to put into the private folders (path there -> file to copy), as a pod's
    #: volumes would put them there.
    files: dict[str, str] = field(default_factory=dict)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)))

    @classmethod
    def read(cls, path: Path) -> Spec:
        raw: dict[str, Any] = json.loads(path.read_text())
        return cls(
            argv=list(raw["argv"]),
            env=dict(raw["env"]),
            keep=list(raw["keep"]),
            outbound=[Relay(**r) for r in raw["outbound"]],
            inbound=[Relay(**r) for r in raw["inbound"]],
            files=dict(raw.get("files") or {}),
        )


def unshare_command() -> list[str]:
    """The `unshare` invocation that makes a sandbox (raises if there is no `unshare`)."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            "operators run in network and mount namespaces, which need Linux and util-linux's "
            "`unshare`; neither is available here"
        )
    command = [unshare, "--net", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        command[1:1] = ["--user", "--map-root-user"]
    return command


def launcher_argv(spec_path: Path) -> list[str]:
    """The command that runs the operator described by `spec_path` in its sandbox (this file
    as a script: it needs the standard library only, not flarekit's imports)."""
    return [sys.executable, "-I", __file__, str(spec_path)]


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


def _send(channel: socket.socket, message: dict[str, Any], fd: int | None = None) -> None:
    data = json.dumps(message).encode()
    socket.send_fds(channel, [data], [fd] if fd is not None else [])


def _receive(channel: socket.socket) -> tuple[dict[str, Any], socket.socket | None]:
    data, fds, _flags, _address = socket.recv_fds(channel, 4096, 1)
    if not data:
        raise EOFError
    if not fds:
        return json.loads(data), None
    passed = socket.socket(fileno=fds[0])
    passed.setblocking(True)  # a socket that had a timeout arrives non-blocking
    return json.loads(data), passed


# -- the launcher (host side) ----------------------------------------------------------------


def _listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    return listener


class _Launcher:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.channel, self.inside_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.send_lock = threading.Lock()
        self.waiting: dict[int, socket.socket] = {}
        self.tokens = iter(range(1, 1 << 62))
        self.lock = threading.Lock()

    def run(self, spec_path: Path) -> int:
        listeners = [(index, _listen(r.host_port)) for index, r in enumerate(self.spec.inbound)]
        env = dict(os.environ)
        env[_CHANNEL_FD_ENV] = str(self.inside_end.fileno())
        inside = subprocess.Popen(
            [*unshare_command(), sys.executable, "-I", __file__, "--inside", str(spec_path)],
            pass_fds=[self.inside_end.fileno()],
            env=env,
            preexec_fn=_die_with_parent,
        )
        self.inside_end.close()
        for index, listener in listeners:
            threading.Thread(target=self._accept, args=(index, listener), daemon=True).start()
        threading.Thread(target=self._serve, daemon=True).start()
        signal.signal(signal.SIGTERM, lambda *_: inside.terminate())
        return inside.wait()

    def _accept(self, index: int, listener: socket.socket) -> None:
        """A host client for an inbound port: ask the inside for a connection to match."""
        while True:
            client, _address = listener.accept()
            with self.lock:
                token = next(self.tokens)
                self.waiting[token] = client
            with self.send_lock:
                _send(self.channel, {"connect": index, "token": token})

    def _serve(self) -> None:
        while True:
            try:
                message, passed = _receive(self.channel)
            except (EOFError, OSError):
                return
            if "outbound" in message and passed is not None:
                inner = passed
                relay = self.spec.outbound[int(message["outbound"])]
                try:
                    host = socket.create_connection(("127.0.0.1", relay.host_port), timeout=10)
                    host.settimeout(None)
                except OSError:
                    inner.close()
                    continue
                _splice(inner, host)
            elif "token" in message:
                with self.lock:
                    client = self.waiting.pop(int(message["token"]), None)
                if client is None:
                    continue
                if passed is None:
                    client.close()  # nothing listens inside yet: the client sees a reset
                    continue
                _splice(client, passed)


# -- the inside ------------------------------------------------------------------------------


def _loopback_up() -> None:
    """`ip link set lo up`: a new network namespace's loopback interface starts down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22s", b"lo", 0, b"")
        flags = struct.unpack("16sH22s", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22s", b"lo", flags | _IFF_UP, b""))


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


def private_folders() -> list[Path]:
    """The folders that are fresh and private in a sandbox: /tmp, and /run (where
    /var/run/secrets is)."""
    return [Path("/tmp"), Path("/var/run").resolve()]


def _is_private(path: str | Path) -> bool:
    resolved = Path(path).resolve()
    return any(resolved.is_relative_to(folder) for folder in private_folders())


def _private_folders(keep: Sequence[str]) -> None:
    """A fresh tmpfs on each private folder, with the directories in `keep` mounted back
    where they were."""
    hidden = [p for p in keep if _is_private(p)]
    held = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in hidden]
    for folder in private_folders():
        _mount("tmpfs", str(folder), "tmpfs", 0, "mode=1777" if folder.name == "tmp" else None)
    for path, fd in held:
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC, None)
        os.close(fd)


def _inside(spec: Spec, channel: socket.socket) -> int:
    _loopback_up()
    _private_folders(spec.keep)
    for target, source in spec.files.items():
        if not _is_private(target):
            raise SystemExit(f"refusing to write {target}: only the private folders are")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)
    send_lock = threading.Lock()

    def forward(index: int, listener: socket.socket) -> None:
        while True:
            conn, _address = listener.accept()
            with send_lock:
                _send(channel, {"outbound": index}, conn.fileno())
            conn.close()

    for index, relay in enumerate(spec.outbound):
        listener = _listen(relay.port)
        threading.Thread(target=forward, args=(index, listener), daemon=True).start()

    def connect() -> None:
        while True:
            try:
                message, _nothing = _receive(channel)
            except (EOFError, OSError):
                os._exit(0)  # the launcher is gone
            relay = spec.inbound[int(message["connect"])]
            reply = {"token": message["token"]}
            try:
                conn = socket.create_connection(("127.0.0.1", relay.port), timeout=5)
            except OSError:
                with send_lock:
                    _send(channel, reply)
                continue
            with send_lock:
                _send(channel, reply, conn.fileno())
            conn.close()

    threading.Thread(target=connect, daemon=True).start()
    operator = subprocess.Popen(spec.argv, env=spec.env, preexec_fn=_die_with_parent)
    signal.signal(signal.SIGTERM, lambda *_: operator.terminate())
    return operator.wait()


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--inside"]:
        _die_with_parent()
        channel = socket.socket(fileno=int(os.environ.pop(_CHANNEL_FD_ENV)))
        return _inside(Spec.read(Path(argv[1])), channel)
    spec_path = Path(argv[0])
    return _Launcher(Spec.read(spec_path)).run(spec_path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
