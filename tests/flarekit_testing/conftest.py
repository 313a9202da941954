"""Shared fixtures for FakeCluster tests: one running cluster per module, a namespace per test."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from fakecluster_support import Raw, gadget_crd, widget_crd

from flarekit_testing import FakeCluster
from flarekit_testing.pytest_plugin import fake_cluster, pytest_configure

# The user-facing fixture, used here as a user's conftest would (pytest_plugins only works in
# the root conftest, which this package does not own).
__all__ = ["fake_cluster", "pytest_configure"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[FakeCluster]:
    with FakeCluster(crds=[widget_crd(), gadget_crd()], bookmark_interval=0.2) as fc:
        yield fc


_counter = itertools.count()


@pytest.fixture
def ns(cluster: FakeCluster) -> str:
    """A fresh namespace for one test."""
    name = f"t{next(_counter)}"
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


@pytest.fixture(scope="module")
def client(cluster: FakeCluster) -> Iterator[Any]:
    api_client = cluster.api_client()
    yield api_client
    api_client.close()


@pytest.fixture
def api(client: Any) -> Any:
    return kubernetes.client.CustomObjectsApi(client)


@pytest.fixture
def raw(cluster: FakeCluster) -> Raw:
    return Raw(cluster)
