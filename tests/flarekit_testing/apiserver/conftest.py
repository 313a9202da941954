"""`api_server`: FakeCluster (the default releases' CRDs) and the session's real control plane
(`control_plane`, tests/conftest.py), for the tests that hold FakeCluster to what
kube-apiserver answers. The real server is right: a test here fails on FakeCluster until
FakeCluster answers the same.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from flarekit_testing import FakeCluster


@pytest.fixture(scope="module")
def default_fake() -> Iterator[FakeCluster]:
    with FakeCluster() as fc:
        yield fc


@pytest.fixture(params=["fakecluster", "controlplane"])
def api_server(request: pytest.FixtureRequest) -> Any:
    if request.param == "fakecluster":
        return request.getfixturevalue("default_fake")
    return request.getfixturevalue("control_plane")


@pytest.fixture
def api_namespace(api_server: Any) -> Iterator[str]:
    name = f"agree-{uuid.uuid4().hex[:8]}"
    api_server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    api_server.delete("namespaces", name)
