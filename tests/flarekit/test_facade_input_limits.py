"""Facade inputs Kubernetes would refuse (or that would fail on the node) are refused when the
description is built, before any request, with the parameter path and the allowed values:
counts beyond int32, toleration and taint effects and operators, malformed image references,
quantities too large to store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from flarekit._validation import ConfigError
from flarekit.cluster import ClusterConfiguration
from flarekit.job import DistributedJob, RayJob
from flarekit.job._trainjob import TrainJob
from flarekit.kueue import ClusterQueueSpec, ResourceFlavorSpec

BAD_TOLERATION = {"key": "gpu", "operator": "Maybe", "effect": "Sometimes"}


def _cluster(**options: Any) -> object:
    return ClusterConfiguration(name="c", **options)


CASES: list[tuple[str, Callable[[], object], str, str]] = [
    # (what, build, field path, text of the allowed values)
    ("num_workers 10**12", lambda: _cluster(num_workers=10**12), "num_workers", "2147483647"),
    ("num_nodes 10**12", lambda: TrainJob("t", image="a/b:1", num_nodes=10**12), "num_nodes",
     "2147483647"),
    ("gpu 10**12", lambda: DistributedJob("d", script="x.py", gpu=10**12), "gpu",
     "2147483647"),
    ("memory 1e1000", lambda: _cluster(worker_memory_requests="1e1000",
                                       worker_memory_limits="1e1000"),
     "worker_memory_requests", "2^63-1"),
    ("quota 1e1000", lambda: ClusterQueueSpec("q", {"f": {"memory": "1e1000"}}),
     "flavors['f']['memory']", "2^63-1"),
    ("toleration operator", lambda: _cluster(worker_tolerations=[BAD_TOLERATION]),
     "worker_tolerations[0].operator", "'Exists', 'Equal'"),
    ("toleration effect", lambda: _cluster(head_tolerations=[BAD_TOLERATION]),
     "head_tolerations[0].effect", "'NoSchedule', 'PreferNoSchedule', 'NoExecute'"),
    ("job toleration", lambda: DistributedJob("d", script="x.py", tolerations=[BAD_TOLERATION]),
     "tolerations[0].effect", "'NoExecute'"),
    ("flavor toleration", lambda: ResourceFlavorSpec("f", tolerations=[BAD_TOLERATION]),
     "tolerations[0].operator", "'Exists', 'Equal'"),
    ("flavor taint", lambda: ResourceFlavorSpec("f", node_taints=[{"key": "a",
                                                                   "effect": "Maybe"}]),
     "node_taints[0].effect", "'NoSchedule', 'PreferNoSchedule', 'NoExecute'"),
    ("tab in image", lambda: _cluster(image="bad\timage"), "image", "lower-case"),
    ("upper-case image", lambda: _cluster(image="UPPER/Ray:2.9.0"), "image", "lower-case"),
    ("bad digest", lambda: TrainJob("t", image="@sha256:zz"), "image", "sha256"),
    ("bad digest, job", lambda: DistributedJob("d", script="x.py", image="ray@sha256:zz"),
     "image", "sha256"),
    ("rayjob image", lambda: RayJob("r", entrypoint="x", cluster_config=_cluster(
        image="UPPER/Ray:2.9.0", appwrapper=False)), "image", "lower-case"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "build", "field", "allowed"), CASES, ids=[c[0] for c in CASES])
def test_refused_naming_the_path_and_the_allowed_values(
    what: str, build: Callable[[], object], field: str, allowed: str
) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    problem = next((p for p in info.value.problems if p.field == field), None)
    assert problem is not None, f"{what}: no problem for {field}: {info.value}"
    assert allowed in problem.expected


@pytest.mark.parametrize(
    "image",
    [
        "rayproject/ray:2.47.1",
        "quay.io/modh/ray:2.47.1-py311",
        "localhost:5000/team/ray",
        "ray@sha256:" + "a" * 64,
        "registry.example.com:443/a/b/c:v1.0_rc-1@sha256:" + "0" * 64,
    ],
)
def test_valid_image_references_pass(image: str) -> None:
    ClusterConfiguration(name="c", image=image, ray_version=None)


def test_valid_tolerations_and_taints_pass() -> None:
    tolerations = [
        {"operator": "Exists"},
        {"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoSchedule"},
        {"key": "spot", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
    ]
    ResourceFlavorSpec("f", node_taints=[{"key": "gpu", "effect": "NoSchedule"}],
                       tolerations=tolerations)  # fmt: skip
    ClusterConfiguration(name="c", worker_tolerations=tolerations)
