"""A create whose answer is lost: the client reads the object back instead of reporting the
cluster unavailable, and creating the same object again returns it instead of raising
`AlreadyExists`; a different object of the same name is still `AlreadyExists`."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from client_support import raycluster

from flarekit import AlreadyExists, ApiUnavailable, Client, RetryPolicy, from_kubeconfig
from flarekit.client._fingerprint import CREATED_FROM
from flarekit_testing import ClusterBackend, ControlPlane, FakeCluster
from kube_support import client_for, new_namespace
from wait_support import wait_until


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kuberay": "v1.7.0"}) as cluster:
        yield cluster


def _client(server: ClusterBackend, timeout: float = 30.0) -> Client:
    """Without retries: each test makes an answer get lost once."""
    return client_for(server, timeout=timeout, retry=RetryPolicy(attempts=1))


def test_a_create_whose_answer_is_lost_returns_the_created_object(fc: FakeCluster, ns: str) -> None:
    fc.delay(lambda r: r.method == "POST" and r.path.endswith(f"{ns}/rayclusters"), 0.5, times=1)
    try:
        with _client(fc, timeout=0.3) as client:
            created = client.create(raycluster("slow"), namespace=ns)
    finally:
        fc.clear_faults()
    assert created.metadata is not None and created.metadata.uid
    stored = fc.get("rayclusters", "slow", ns) or {}
    assert stored["metadata"]["uid"] == created.metadata.uid


def test_resubmitting_after_an_unresolved_timeout_returns_our_object(
    fc: FakeCluster, ns: str
) -> None:
    fc.delay(lambda r: r.method == "POST" and r.path.endswith(f"{ns}/rayclusters"), 0.8, times=1)
    try:
        with _client(fc, timeout=0.2) as client:
            with pytest.raises(ApiUnavailable) as info:
                client.create(raycluster("later"), namespace=ns)
            assert "creating the same object again is safe" in str(info.value)
            wait_until(lambda: fc.get("rayclusters", "later", ns), "the first create lands")
            again = client.create(raycluster("later"), namespace=ns)
    finally:
        fc.clear_faults()
    stored = fc.get("rayclusters", "later", ns) or {}
    assert again.metadata is not None and again.metadata.uid == stored["metadata"]["uid"]


@pytest.fixture(params=["fake", "real"])
def server(request: pytest.FixtureRequest, fc: FakeCluster) -> ClusterBackend:
    if request.param == "fake":
        return fc
    plane: ControlPlane = request.getfixturevalue("control_plane")
    return plane


def test_the_same_object_is_recognised_and_another_is_not(
    server: ClusterBackend,
) -> None:
    ns = new_namespace(server)
    with _client(server) as client:
        first = client.create(raycluster("twice", {"team": "a"}), namespace=ns)
        assert first.metadata is not None and first.metadata.annotations
        assert first.metadata.annotations[CREATED_FROM].startswith("sha256:")
        again = client.create(raycluster("twice", {"team": "a"}), namespace=ns)
        assert again.metadata is not None and again.metadata.uid == first.metadata.uid
        with pytest.raises(AlreadyExists):
            client.create(raycluster("twice", {"team": "b"}), namespace=ns)


class _ResettingProxy:
    """A TCP proxy to `port` that resets the first `resets` connections as soon as they are
    accepted (the client is then still in its TLS handshake: nothing of a request was sent)."""

    def __init__(self, port: int, resets: int) -> None:
        self._target = port
        self._resets = resets
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.accepted += 1
            if self.accepted <= self._resets:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()  # RST, not FIN
                continue
            upstream = socket.create_connection(("127.0.0.1", self._target))
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._listener.close()


def test_a_create_whose_connection_resets_while_opening_is_sent_again_at_once(
    fc: FakeCluster, ns: str, tmp_path: Path
) -> None:
    """Nothing was sent, so the create goes again at once: no wait for a write that may have
    landed (which would last the client's whole timeout), and nothing counted as unanswered."""
    proxy = _ResettingProxy(int(fc.url.rsplit(":", 1)[1]), resets=1)
    document = yaml.safe_load(fc.kubeconfig_path.read_text())
    document["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{proxy.port}"
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(document))
    try:
        with Client(from_kubeconfig(kubeconfig), retry=RetryPolicy(attempts=1)) as client:
            started = time.monotonic()
            created = client.create(raycluster("reset"), namespace=ns)
            elapsed = time.monotonic() - started
            assert client.unanswered_writes == 0
    finally:
        proxy.close()
    assert proxy.accepted == 2 and elapsed < 2.0, elapsed
    assert created.metadata is not None and created.metadata.name == "reset"
    posts = [r for r in fc.requests if r.method == "POST" and r.path.endswith(f"{ns}/rayclusters")]
    assert len(posts) == 1
