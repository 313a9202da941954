"""Fixtures and checks for every facade test.

A test module starts the FakeCluster it needs as its `fc` fixture (the releases and simulated
controllers differ from module to module); `client` and `ns` then give it a client of that
cluster and a fresh namespace per test.

Every request a FakeCluster receives comes through flarekit's `Client` (its transport's
`User-Agent`), or from the test's own reads through `FakeCluster.api_client()`. A request sent
any other way (the official client's API classes on `Client.api_client`, a bare urllib3 pool)
bypasses the client's retry, timeout, warning and error policy, and fails the test that made it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from client_support import outside_client

from flarekit import Client
from flarekit_testing import ClusterBackend, FakeCluster
from kube_support import client_for, new_namespace


@pytest.fixture(autouse=True)
def _every_request_through_client(request: pytest.FixtureRequest) -> Iterator[None]:
    exempt = request.node.get_closest_marker("requests_outside_client")
    if exempt:
        yield
        return
    seen = {id(c): len(c.requests) for c in FakeCluster.running()}
    yield
    for cluster in FakeCluster.running():
        outside = outside_client(cluster, seen.get(id(cluster), 0))
        assert not outside, f"requests not sent through flarekit's Client: {outside}"


@pytest.fixture(scope="module")
def client(fc: FakeCluster) -> Iterator[Client]:
    """A client of the module's FakeCluster, shared by its tests."""
    with client_for(fc) as c:
        yield c


@pytest.fixture
def ns(fc: FakeCluster) -> str:
    """A fresh namespace in the module's FakeCluster, for one test."""
    return new_namespace(fc)


@pytest.fixture(params=["fake", "real"])
def backend(request: pytest.FixtureRequest) -> Iterator[ClusterBackend]:
    """A bare FakeCluster, then the session's real control plane: one test, both servers."""
    if request.param == "real":
        yield request.getfixturevalue("control_plane")
        return
    with FakeCluster() as fc:
        yield fc
