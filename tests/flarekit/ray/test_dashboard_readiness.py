"""`Cluster.is_dashboard_ready()` and `wait_ready()` waiting for the Ray dashboard to answer,
against a scripted dashboard on 127.0.0.1 (the URL a Route or Ingress would give is stood in
for: finding that URL is tested in tests/flarekit/cluster/test_cluster_dashboard.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_dashboard import FakeDashboard, Reply

from flarekit import (
    Client,
    Cluster,
    ClusterConfiguration,
    RetryPolicy,
    WaitTimeout,
    from_kubeconfig,
)
from flarekit.cluster import _endpoints
from flarekit_testing import FakeCluster, RayClusterController


def _exposed_at(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """The dashboard as a Route would expose it at `url`: the one lookup that every step of a
    dashboard check shares answers `url`."""
    monkeypatch.setattr(_endpoints, "find_dashboard_uri", lambda *args, **kwargs: url)


FAST = {"poll": 0.01, "max_poll": 0.05, "progress": False}
VERSION = Reply(body={"version": "4", "ray_version": "2.9.0"})


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeCluster]:
    # KubeRay alone: no Kueue, so no queue is needed.
    releases = {"kuberay": "v1.7.0"}
    with FakeCluster(
        releases=releases, tick_interval=0.02, controllers=[RayClusterController()]
    ) as fc:
        yield fc


@pytest.fixture
def cluster(fake: FakeCluster, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    kube = Client(from_kubeconfig(fake.kubeconfig_path), retry=RetryPolicy(attempts=1))
    name = request.node.name.replace("_", "-")[5:40].strip("-")
    made = Cluster(ClusterConfiguration(name=name, namespace="default", num_workers=1), kube)
    made.apply()
    yield made
    made.down()


def test_a_dashboard_that_is_not_exposed_is_not_ready_and_not_waited_for(cluster: Cluster) -> None:
    assert cluster.is_dashboard_ready() is False
    assert cluster.wait_ready(timeout=30, **FAST).ready


def test_wait_ready_returns_once_the_dashboard_answers(
    cluster: Cluster, dashboard: FakeDashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    dashboard.route("GET", "/api/version", Reply(status=503), Reply(status=503), VERSION)
    _exposed_at(monkeypatch, dashboard.url)
    status = cluster.wait_ready(timeout=30, **FAST)
    assert status.ready
    assert dashboard.count("GET", "/api/version") == 3  # two 503s, then the answer
    assert cluster.is_dashboard_ready() is True


def test_wait_ready_without_the_dashboard_check(
    cluster: Cluster, dashboard: FakeDashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    dashboard.route("GET", "/api/version", Reply(status=503))
    _exposed_at(monkeypatch, dashboard.url)
    assert cluster.wait_ready(timeout=30, dashboard_check=False, **FAST).ready
    assert dashboard.count() == 0


def test_a_dashboard_that_never_answers_times_out_naming_it(
    cluster: Cluster, dashboard: FakeDashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    dashboard.route("GET", "/api/version", Reply(status=503))
    _exposed_at(monkeypatch, dashboard.url)
    with pytest.raises(WaitTimeout) as timed_out:
        cluster.wait_ready(timeout=1, **FAST)
    assert f"the Ray dashboard of default/{cluster.name} at {dashboard.url}" in str(timed_out.value)
    assert "not answering yet" in str(timed_out.value)
    assert cluster.is_dashboard_ready() is False


def test_an_unreachable_dashboard_is_not_ready(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeDashboard() as gone:
        url = gone.url
    _exposed_at(monkeypatch, url)
    assert cluster.is_dashboard_ready(timeout=1) is False


def test_a_host_that_never_resolves_is_not_waited_for(
    cluster: Cluster, dashboard: FakeDashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The practice cluster's Ingresses name hosts under .invalid (RFC 6761): no lookup, no wait.
    _exposed_at(monkeypatch, "http://demo.practice.invalid")
    assert cluster.wait_ready(timeout=30, **FAST).ready
    assert cluster.is_dashboard_ready() is False
