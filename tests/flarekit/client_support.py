"""Shared pieces of the client tests: a running FakeCluster and RayCluster objects (the shared
`client` and `ns` fixtures in ``conftest.py`` give a client of it and a fresh namespace).

The tests drive flarekit's `Client` against `flarekit_testing.FakeCluster` over HTTPS, the
way users reach a real cluster; FakeCluster's direct access (`create`, `objects`, `requests`)
is used only to seed objects and to check what the server received.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster
from flarekit_testing.apiserver._server import API_CLIENT_AGENT

RELEASES = {"kuberay": "v1.7.0", "kueue": "v0.19.2"}

#: What flarekit's transport sends as `User-Agent` (``flarekit`` or ``flarekit/<version>``).
FLAREKIT_AGENT = "flarekit"


def outside_client(cluster: FakeCluster, since: int = 0) -> list[str]:
    """The requests (from the `since`-th on) that came neither through `Client` nor through
    the test's `FakeCluster.api_client()`, as ``METHOD path (User-Agent)``."""
    return [
        f"{r.method} {r.path} ({r.user_agent})"
        for r in cluster.requests[since:]
        if r.user_agent != API_CLIENT_AGENT and (r.user_agent or "").split("/")[0] != FLAREKIT_AGENT
    ]


def raycluster_body(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A minimal valid RayCluster as plain JSON."""
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    head = {
        "rayStartParams": {},
        "template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray"}]}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": metadata,
        "spec": {"headGroupSpec": head, **spec},
    }


def raycluster(name: str, labels: dict[str, str] | None = None, **spec: Any) -> RayCluster:
    return RayCluster.model_validate(raycluster_body(name, labels, **spec))


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(releases=RELEASES, bookmark_interval=0.2) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def cluster(fc: FakeCluster) -> FakeCluster:
    """The module's FakeCluster (`fc`, which the shared `client` and `ns` fixtures use), by
    the name these tests give it."""
    return fc
