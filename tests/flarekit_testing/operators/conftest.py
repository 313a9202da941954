"""`stack`: FakeCluster with the simulated operators, and the session's control plane with
the real ones (`operator_plane`, tests/conftest.py), for the tests that hold the simulations
to what the real operators answer. The real side is right."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
)
from flarekit_testing.controlplane._operator_runner import versions_for
from flarekit_testing.controlplane._operators import FAMILIES, OperatorNotBuilt


@pytest.fixture(scope="module")
def simulated() -> Iterator[FakeCluster]:
    """The simulated operators at the releases the real side runs (the defaults when the
    real operators are not built)."""
    try:
        releases = versions_for(list(FAMILIES), None)
    except OperatorNotBuilt:
        releases = {}
    controllers = [
        KueueController(),
        AppWrapperController(),
        RayClusterController(),
        RayJobController(run_for=1.0, wait_for_cluster=True),
    ]
    with FakeCluster(releases=releases or None, tick_interval=0.05, controllers=controllers) as fc:
        yield fc


@pytest.fixture(params=["fakecluster", "controlplane"])
def stack(request: pytest.FixtureRequest) -> Any:
    if request.param == "fakecluster":
        return request.getfixturevalue("simulated")
    return request.getfixturevalue("operator_plane")


@pytest.fixture
def ns(stack: Any) -> Iterator[str]:
    name = f"ops-{uuid.uuid4().hex[:8]}"
    stack.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    stack.delete("namespaces", name)
