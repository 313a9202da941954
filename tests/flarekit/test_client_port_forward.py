"""`Client.port_forward` against a small server that speaks the node's port-forward framing:
what the client asks for (path, port, subprotocol, credentials), the port number that opens
each channel, data both ways, one stream per connection, errors of the node, and a close that
leaves no thread and no socket behind."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from portforward_server import PROTOCOL, PortForwardServer

from flarekit import Client, NotFound, PortForwardError, from_kubeconfig


@pytest.fixture
def server() -> Iterator[PortForwardServer]:
    with PortForwardServer() as running:
        yield running


@pytest.fixture
def client(server: PortForwardServer, tmp_path: Path) -> Iterator[Client]:
    with Client(from_kubeconfig(server.kubeconfig(tmp_path)), timeout=10) as made:
        yield made


def _forward_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("flarekit-port-forward")]


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(data)
        received = b""
        while len(received) < len(data):
            chunk = conn.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def _wait(condition: object, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_data_goes_both_ways_over_the_pods_port(client: Client, server: PortForwardServer) -> None:
    with client.port_forward("web", 7000, namespace="team-a") as forward:
        assert forward.address == "127.0.0.1"
        assert forward._listener is not None
        assert forward._listener.getsockname()[0] == "127.0.0.1"
        assert _exchange(forward.local_port, b"hello pod") == b"hello pod"
    # the check stream of start(), then the connection's own
    assert len(server.state.seen) == 2
    for seen in server.state.seen:
        assert seen.target == "/api/v1/namespaces/team-a/pods/web/portforward?ports=7000"
        assert seen.subprotocols == [PROTOCOL]
        assert seen.headers["authorization"] == "Bearer t0ken"
        assert seen.headers["user-agent"].startswith("flarekit")


def test_each_connection_has_its_own_stream(client: Client, server: PortForwardServer) -> None:
    payloads = [bytes([n]) * (256 * 1024 + n) for n in range(4)]
    results: dict[int, bytes] = {}
    with client.port_forward("web", 7000, namespace="ns") as forward:

        def run(n: int) -> None:
            results[n] = _exchange(forward.local_port, payloads[n])

        threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert [results[n] == payloads[n] for n in range(4)] == [True] * 4
    assert len(server.state.seen) == 1 + 4


def test_close_ends_every_connection_and_leaves_no_thread_or_socket(
    client: Client, server: PortForwardServer
) -> None:
    before = _open_fds()
    forward = client.port_forward("web", 7000, namespace="ns").start()
    conn = socket.create_connection(("127.0.0.1", forward.local_port), timeout=10)
    conn.sendall(b"ping")
    assert conn.recv(10) == b"ping"
    assert _forward_threads()
    forward.close()
    assert conn.recv(10) == b""  # the local connection was ended
    conn.close()
    assert _forward_threads() == []
    _wait(lambda: server.state.open_streams == 0, "the server's streams end too")
    _wait(lambda: _open_fds() == before, "no socket is left (the server's included)")
    with pytest.raises(ConnectionRefusedError):  # nothing listens there any more
        socket.create_connection(("127.0.0.1", forward.local_port), timeout=2)
    forward.close()  # twice is fine


def test_a_pod_that_does_not_exist_fails_at_the_start(
    client: Client, server: PortForwardServer
) -> None:
    before = _open_fds()
    with pytest.raises(NotFound) as info, client.port_forward("missing", 7000, namespace="ns"):
        raise AssertionError("not reached")
    assert info.value.code == 404
    assert 'pods "missing" not found' in str(info.value)
    assert "pods/portforward" in str(info.value)
    assert _forward_threads() == []
    _wait(lambda: _open_fds() == before, "no socket is left (the server's included)")


def test_the_nodes_error_ends_the_connection_and_is_kept(
    client: Client, server: PortForwardServer, caplog: pytest.LogCaptureFixture
) -> None:
    with client.port_forward("refused", 7000, namespace="ns") as forward:
        with socket.create_connection(("127.0.0.1", forward.local_port), timeout=10) as conn:
            assert conn.recv(10) == b""
        _wait(lambda: forward.errors, "the error is kept")
    [error] = forward.errors
    assert isinstance(error, PortForwardError)
    assert "port 7000: error forwarding port 7000" in str(error)
    assert "connection refused" in caplog.text


def test_a_stream_set_up_for_another_port_is_refused(client: Client) -> None:
    with pytest.raises(PortForwardError, match="set up port 7001, not 7000"):
        client.port_forward("wrongport", 7000, namespace="ns").start()
    assert _forward_threads() == []


@pytest.mark.parametrize(
    ("port", "local_port", "message"),
    [
        (0, 0, "the pod's port must be 1 to 65535, got 0"),
        (70000, 0, "the pod's port must be 1 to 65535, got 70000"),
        ("10001", 0, "the pod's port must be an int, got '10001'"),
        (10001, -1, "local_port must be 0 (any free port) to 65535, got -1"),
    ],
)
def test_bad_ports_are_refused_before_any_request(
    client: Client, server: PortForwardServer, port: object, local_port: int, message: str
) -> None:
    with pytest.raises(ValueError) as info:
        client.port_forward("web", port, local_port=local_port)  # type: ignore[arg-type]
    assert str(info.value) == message
    assert server.state.seen == []


def test_fakecluster_offers_no_port_forward_and_says_so() -> None:
    """A documented difference (docs/fakecluster.md): FakeCluster runs no containers, so it
    serves no ``pods/portforward``; the forward fails at its start, with a note saying why."""
    from flarekit_testing import FakeCluster

    with FakeCluster(crds=[]) as fc, Client(from_kubeconfig(fc.kubeconfig_path)) as client:
        pod = {"name": "main", "image": "python:3.11"}
        fc.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"containers": [pod]},
            }
        )
        with pytest.raises(NotFound) as info, client.port_forward("web", 8080):
            raise AssertionError("not reached")
    note = "\n".join(info.value.__notes__)
    assert "does not serve pods/portforward" in note
    assert "FakeCluster offers no port-forward" in note
    assert _forward_threads() == []
