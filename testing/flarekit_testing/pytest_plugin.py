"""A pytest fixture that runs a FakeCluster for one test.

Enable it in a `conftest.py` with ``pytest_plugins = ["flarekit_testing.pytest_plugin"]``,
then ask for ``fake_cluster``. By default it serves the CRDs of the default upstream releases;
choose others with a marker::

    @pytest.mark.fake_cluster(crds=[my_crd])            # exactly these CRDs
    @pytest.mark.fake_cluster(releases={"kueue": "v0.10.6"})
    def test_something(fake_cluster): ...

Every keyword of the marker is passed to `FakeCluster(...)`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flarekit_testing.apiserver import FakeCluster


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fake_cluster(**kwargs): arguments for the fake_cluster fixture's FakeCluster"
    )


@pytest.fixture
def fake_cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    """A running FakeCluster, stopped after the test."""
    marker = request.node.get_closest_marker("fake_cluster")
    kwargs = dict(marker.kwargs) if marker else {}
    with FakeCluster(**kwargs) as cluster:
        yield cluster
