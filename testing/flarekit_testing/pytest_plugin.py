"""A pytest fixture that runs a FakeCluster for one test.

Enable it in a `conftest.py` with ``pytest_plugins = ["flarekit_testing.pytest_plugin"]``,
then ask for ``fake_cluster``. By default it serves the CRDs of the default upstream releases;
choose others with a marker::

    @pytest.mark.fake_cluster(crds=[my_crd])            # exactly these CRDs
    @pytest.mark.fake_cluster(releases={"kueue": "v0.10.6"})
    def test_something(fake_cluster): ...

Every keyword of the marker is passed to `FakeCluster(...)`.

The plugin also fails every test during which a simulated operator (a `Controller` of any
FakeCluster of the process) raised, with the operator's traceback: an operator that died
would otherwise leave checks such as "the queued job stays suspended" passing. A test that
breaks an operator on purpose says so with ``@pytest.mark.simulated_operator_errors_allowed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from flarekit_testing.apiserver import FakeCluster, claim_failures

__all__ = ["fake_cluster", "pytest_configure", "simulated_operators_raised_nothing"]

ALLOWED = "simulated_operator_errors_allowed"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fake_cluster(**kwargs): arguments for the fake_cluster fixture's FakeCluster"
    )
    config.addinivalue_line(
        "markers",
        f"{ALLOWED}: a simulated operator may raise during this test (it breaks one on purpose)",
    )


@pytest.fixture(autouse=True)
def simulated_operators_raised_nothing(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the test if a simulated operator raised while it ran (or since the previous test
    ended): the controllers of every running FakeCluster are let finish what the test started
    first, so that what the test caused is seen by the test."""
    allowed = request.node.get_closest_marker(ALLOWED) is not None
    before = claim_failures()
    if before and not allowed:
        pytest.fail(_message(before, "before this test started"), pytrace=False)
    yield
    for cluster in FakeCluster.running():
        cluster.settle_controllers()
    during = claim_failures()
    if during and not allowed:
        pytest.fail(_message(during, "while this test ran"), pytrace=False)


def _message(failures: list[Any], when: str) -> str:
    shown = "\n\n".join(failure.describe() for failure in failures[:3])
    more = f"\n\n(and {len(failures) - 3} more)" if len(failures) > 3 else ""
    return f"a simulated operator raised {when}:\n\n{shown}{more}"


@pytest.fixture
def fake_cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    """A running FakeCluster, stopped after the test."""
    marker = request.node.get_closest_marker("fake_cluster")
    kwargs = dict(marker.kwargs) if marker else {}
    with FakeCluster(**kwargs) as cluster:
        yield cluster
