"""Ports for the control plane's processes come from below the ephemeral range (where no
outgoing connection can take them before the process binds them) and never twice."""

from __future__ import annotations

import socket

from flarekit.testing import _ports


def test_ports_are_below_the_ephemeral_range_distinct_and_bindable() -> None:
    top = _ports._ephemeral_start()
    ports = [_ports.free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(_ports._LOWEST <= p < top for p in ports)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", ports[0]))


def test_a_port_in_use_is_not_given() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert not _ports._bindable(taken)
