"""The end-to-end tests run twice: on FakeCluster with the simulated operators, and on the real
control plane with the real operators (Kueue, KubeRay, JobSet, Kubeflow Trainer, AppWrapper,
the training-operator), built from their pinned releases by `make control-plane`.

`backend` is one of the two, shared by the whole folder (one control plane with every operator,
started once). Where the two differ, the real one is right: a test that fails only on the
simulated side points at a simulation to fix. Without Go the real side is skipped with the
reason; in CI (`CI=true`) a real side that cannot be built or started fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_support import OPERATORS, Backend, FakeBackend, RealBackend

from flarekit import Client
from flarekit_testing.controlplane._operator_runner import versions_for

#: Seconds a test here may take, its share of the control plane's start included: starting
#: every operator takes minutes on a busy 2-core machine (see docs/operators.md, "Cost").
TIMEOUT = 1200


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.timeout(TIMEOUT))


@pytest.fixture(scope="package", params=["fakecluster", "controlplane"])
def backend(request: pytest.FixtureRequest, operator_builds: dict[str, str]) -> Iterator[Backend]:
    if request.param == "controlplane":
        # The session's control plane with every operator (tests/conftest.py), which the
        # client differential compares against too.
        yield RealBackend(request.getfixturevalue("operator_plane"))
        return
    # The simulated side serves the same releases' CRDs as the real side when the operators
    # are built, else the releases the simulation is written against.
    built = all(family in operator_builds for family in OPERATORS)
    releases = versions_for(OPERATORS, operator_builds) if built else {}
    with FakeBackend.start(releases) as fake:
        yield fake


@pytest.fixture
def namespace(backend: Backend) -> Iterator[str]:
    """A fresh namespace, deleted after the test with everything in it (so that the next
    test finds the nodes and the queues' quota free)."""
    name = backend.namespace()
    yield name
    backend.drop(name)


@pytest.fixture
def client(backend: Backend, namespace: str) -> Iterator[Client]:
    """A client of the backend, in the test's namespace."""
    with backend.client(namespace) as c:
        yield c


@pytest.fixture
def lq(backend: Backend, namespace: str) -> str:
    """LocalQueue `lq` in the test's namespace, once Kueue can use it (and its ClusterQueue)."""
    backend.queues(namespace)
    return "lq"
