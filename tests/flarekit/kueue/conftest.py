"""The Kueue tests run on FakeClusters serving an old and a new Kueue release (a module may
start its own instead), with a new client per test: served versions and queue lookups are
cached per client, and these tests read them afresh."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kueue_support import KUEUE_RELEASES

from flarekit import Client
from flarekit_testing import FakeCluster
from kube_support import client_for


@pytest.fixture(scope="module", params=KUEUE_RELEASES)
def fc(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kueue": request.param}) as cluster:
        yield cluster


@pytest.fixture
def client(fc: FakeCluster) -> Iterator[Client]:
    with client_for(fc) as c:
        yield c
