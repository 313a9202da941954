"""A create whose answer is lost: the client reads the object back instead of reporting the
cluster unavailable, and creating the same object again returns it instead of raising
`AlreadyExists`; a different object of the same name is still `AlreadyExists`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from client_support import raycluster

from flarekit import AlreadyExists, ApiUnavailable, Client, RetryPolicy
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
