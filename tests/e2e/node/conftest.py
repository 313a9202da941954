"""The end-to-end tests on the real node: the same control plane and real operators as the
`controlplane` lane, with one real node instead of KWOK's (`ControlPlane(kubelet=True)`),
where Ray and PyTorch run in containers from the images `make real-node` builds. One control
plane for the folder, started once; each test takes its own namespace.

These tests assert what the programs printed. They are few and chosen (a Ray cluster, queued
and wrapped; RayJobs through KubeRay's submitter and through the dashboard; a two-node
TrainJob with stop and resume; a DistributedJob): each Ray cluster takes a minute of the two
CPUs. Skipped without a node, except in CI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_support import Backend, NodeBackend

from flarekit_testing import ControlPlane
from flarekit_testing.controlplane import OperatorNotBuilt
from flarekit_testing.controlplane._operator_runner import versions_for

#: What these tests use (the training-operator's PyTorchJob is the KWOK lane's alone).
OPERATORS = ("kuberay", "kueue", "jobset", "trainer", "appwrapper")


@pytest.fixture(scope="package")
def backend(controlplane_binaries: Path, real_node_ready: None) -> Iterator[Backend]:
    try:
        releases = versions_for(OPERATORS, None)
    except OperatorNotBuilt as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true: {exc}", pytrace=False)
        pytest.skip(str(exc))
    with ControlPlane(
        releases=releases,
        operators=OPERATORS,
        binaries=controlplane_binaries,
        start_timeout=600.0,
        kubelet=True,
    ) as plane:
        yield NodeBackend(plane)
