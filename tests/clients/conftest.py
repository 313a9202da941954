"""Backends for the client differential suite.

FakeCluster is always there. The real side is a kube-apiserver reached through a kubeconfig:
the cluster of `FLAREKIT_REFERENCE_KUBECONFIG` when set, else the session's
`flarekit_testing.ControlPlane` (tests/conftest.py). Where the control plane is not built
(outside CI), FakeCluster is compared with the outcomes recorded from a real one in
`golden/` (`make differential-golden` records them again).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from differential_backends import ENV

from flarekit_testing import FakeCluster


@pytest.fixture(scope="session")
def fake_kubeconfig() -> Iterator[Path]:
    with FakeCluster() as fc:
        yield fc.kubeconfig_path


@pytest.fixture(scope="session")
def real_kubeconfig(request: pytest.FixtureRequest) -> Path | None:
    """A live kube-apiserver's kubeconfig, or None (then the recorded outcomes are used)."""
    given = os.environ.get(ENV)
    if given:
        return Path(given)
    try:
        plane = request.getfixturevalue("control_plane")
    except pytest.skip.Exception:  # not built here (in CI that is a failure, not a skip)
        return None
    return Path(plane.kubeconfig_path)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from test_differential import FIGURES

    if FIGURES:
        terminalreporter.section("client differential: FakeCluster vs kube-apiserver")
        for client, figure in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{client:10} {figure}")
