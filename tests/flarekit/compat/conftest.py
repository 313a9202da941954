"""The real control plane of each release set (see ``real_sets``), for the tests marked
``operator_matrix``: `release_plane`, parametrized by set name with ``indirect=True``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_sets import NODES, release_sets

from flarekit_testing import ControlPlane


@pytest.fixture(scope="session")
def release_plane(
    request: pytest.FixtureRequest, controlplane_binaries: Path
) -> Iterator[ControlPlane]:
    """The control plane of release set `request.param`, with its operators and nodes."""
    sets = release_sets()
    if request.param not in sets:
        message = "the operators are not built: run `make control-plane-matrix`"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    releases, operators = sets[request.param]
    with ControlPlane(
        releases=releases,
        operators=operators,
        binaries=controlplane_binaries,
        nodes=NODES,
        start_timeout=600.0,
    ) as plane:
        yield plane
