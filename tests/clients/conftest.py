"""The two sides of the client differential suite, started once per run.

`simulated`: FakeCluster with every simulated operator, at the releases the real side runs.
`real`: the session's control plane with the real operators (`operator_plane`,
tests/conftest.py), or the cluster of `FLAREKIT_REFERENCE_KUBECONFIG`; None where the operators
are not built (outside CI): the recorded outcomes in `golden/` stand in for it then.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from differential_backends import ENV, RealSide, server_version, simulated_stack

from flarekit_testing.controlplane._operator_runner import versions_for
from flarekit_testing.controlplane._operators import FAMILIES, OperatorNotBuilt

JSON = dict[str, Any]


@pytest.fixture(scope="session")
def simulated_kubeconfig(real: RealSide | None) -> Iterator[Path]:
    releases: dict[str, str] = {}
    if real is not None and real.source is not None:
        releases = dict(real.source["operators"])
    else:
        try:
            releases = versions_for(list(FAMILIES), None)
        except OperatorNotBuilt:
            releases = {}
    with simulated_stack(releases) as fake:
        yield fake.kubeconfig_path


@pytest.fixture(scope="session")
def real(request: pytest.FixtureRequest) -> RealSide | None:
    given = os.environ.get(ENV)
    if given:
        return RealSide(Path(given), None)
    try:
        plane = request.getfixturevalue("operator_plane")
    except pytest.skip.Exception:  # not built here (in CI that is a failure, not a skip)
        return None
    path = Path(plane.kubeconfig_path)
    return RealSide(path, {"server": server_version(path), "operators": dict(plane.operators)})


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from test_differential import FIGURES

    if FIGURES:
        terminalreporter.section("client differential: FakeCluster vs the real operators")
        for client, figure in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{client:10} {figure}")
