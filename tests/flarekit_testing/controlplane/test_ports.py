"""Ports for the control plane's processes come from below the ephemeral range (where no
outgoing connection can take them before the process binds them) and never twice."""

from __future__ import annotations

import socket

import pytest

from flarekit_testing.controlplane import _ports


def test_ports_are_below_the_ephemeral_range_distinct_and_bindable() -> None:
    top = _ports._ephemeral_start()
    ports = [_ports.free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(_ports._LOWEST <= p < top for p in ports)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", ports[0]))


def _free_in_range(top: int, not_this: set[int]) -> int:
    """A port below `top` that binds now, for the test to offer (or to hold)."""
    for port in range(_ports._LOWEST + 1, top):
        if port not in not_this and port not in _ports._given and _ports._bindable(port):
            return port
    raise AssertionError("no free port below the ephemeral range")


def test_a_port_in_use_or_given_before_is_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """The random draw offers a port someone listens on, then one given out before; neither
    is handed out, the next free one is."""
    top = _ports._ephemeral_start()
    if top - _ports._LOWEST < 1000:
        pytest.skip("no room below the ephemeral range: free_port takes the kernel's choice")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy_port = _free_in_range(top, set())
        busy.bind(("127.0.0.1", busy_port))
        busy.listen()
        given = _ports.free_port()
        free = _free_in_range(top, {busy_port, given})
        offers = iter([busy_port, given, free])
        drawn: list[int] = []

        class Draws:
            @staticmethod
            def randrange(start: int, stop: int) -> int:
                assert (start, stop) == (_ports._LOWEST, top)
                drawn.append(next(offers))
                return drawn[-1]

        monkeypatch.setattr(_ports, "random", Draws)
        assert _ports.free_port() == free
        assert drawn == [busy_port, given, free]
