"""Fixtures for RayJobClient unit tests: a scripted dashboard and a client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_dashboard import FakeDashboard

from flarekit.ray import RayJobClient


@pytest.fixture
def dashboard() -> Iterator[FakeDashboard]:
    with FakeDashboard() as fake:
        yield fake


@pytest.fixture
def client(dashboard: FakeDashboard) -> RayJobClient:
    # No backoff: retries are counted, never timed.
    return RayJobClient(dashboard.url, timeout=5, retries=2, backoff=0)
