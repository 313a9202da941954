"""Loopback ports for the control plane's processes, picked so that nothing takes them before
their process binds them.

A port found free with ``bind(port 0)`` comes from the kernel's ephemeral range, the same range
every outgoing connection's local port comes from. Between picking it and the process binding
it (seconds, for an operator started in its sandbox) one of the many connections a running
control plane and its clients open can take it, and the process then fails with "address
already in use". Ports below the ephemeral range are never handed out to connections, so they
are picked there (at random, checked free by binding), and never twice by this process.
"""

from __future__ import annotations

import random
import socket
import threading
from pathlib import Path

#: Where to look when the ephemeral range cannot be read: below Linux's default (32768).
_LOWEST = 10000
_DEFAULT_EPHEMERAL_START = 32768
_given: set[int] = set()
_lock = threading.Lock()


def _ephemeral_start() -> int:
    try:
        first = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0]
        return int(first)
    except (OSError, ValueError, IndexError):
        return _DEFAULT_EPHEMERAL_START


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nobody listens on, outside the ephemeral range when it leaves room,
    not given out before by this process."""
    top = _ephemeral_start()
    with _lock:
        if top - _LOWEST >= 1000:
            for _ in range(200):
                port = random.randrange(_LOWEST, top)
                if port not in _given and _bindable(port):
                    _given.add(port)
                    return port
        while True:  # no room below the ephemeral range: the kernel's choice
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in _given:
                _given.add(port)
                return port
