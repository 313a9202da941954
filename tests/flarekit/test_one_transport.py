"""One road to the API server: every request flarekit sends goes through `Client` and its
transport. The suite-wide check lives in ``conftest.py`` (it runs after every facade test);
these tests show that it sees a request sent around the client, and what the transport
sends that makes its requests recognisable."""

from __future__ import annotations

from collections.abc import Iterator

import kubernetes
import pytest
from client_support import outside_client

from flarekit import Client, from_kubeconfig
from flarekit_models.core.v1 import Pod
from flarekit_testing import FakeCluster


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(crds=[]) as cluster:
        yield cluster


@pytest.mark.requests_outside_client
def test_a_request_around_the_client_is_found(fc: FakeCluster) -> None:
    with Client(from_kubeconfig(fc.kubeconfig_path)) as client:
        since = len(fc.requests)
        client.list(Pod, namespace="default")
        assert outside_client(fc, since) == []
        # The official API classes on the client's own connection: no retry policy, no
        # flarekit errors. The check names the request.
        kubernetes.client.CoreV1Api(client.api_client).list_namespaced_pod("default")
        found = outside_client(fc, since)
    assert len(found) == 1 and found[0].startswith("GET /api/v1/namespaces/default/pods (")


def test_the_transport_names_itself(fc: FakeCluster) -> None:
    with Client(from_kubeconfig(fc.kubeconfig_path)) as client:
        since = len(fc.requests)
        client.get_raw("/version")
        client.list(Pod, namespace="default")
    agents = {r.user_agent for r in fc.requests[since:]}
    assert len(agents) == 1 and next(iter(agents)).startswith("flarekit")  # type: ignore[union-attr]
