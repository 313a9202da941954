"""``flarekit cluster diff`` and ``cluster apply --dry-run=server`` against FakeCluster: the
dry run writes nothing, and diff exits as kubectl diff does (0: no change, 1: changes, more
than 1: an error). The FakeCluster runs no simulated operator, so no other writer touches the
cluster between the apply and the diffs (Kueue's queue objects are seeded)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_support import flarekit

from flarekit.cli import ExitCode
from flarekit_testing import FakeCluster
from kube_support import cluster_queue, local_queue, new_namespace


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeCluster]:
    with FakeCluster() as fc:
        cluster_queue(fc)
        yield fc


@pytest.fixture
def namespace(fake: FakeCluster) -> str:
    name = new_namespace(fake, "plan")
    local_queue(fake, name, default=True)
    return name


def test_dry_run_apply_then_diff(fake: FakeCluster, namespace: str, tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("name: planned\nnum_workers: 2\nmin_workers: 1\nmax_workers: 4\n")
    dry = flarekit(fake, "cluster", "apply", "-f", str(config), "--dry-run=server",
                   namespace=namespace)  # fmt: skip
    assert dry.code == 0, dry
    assert dry.out.startswith("raycluster.ray.io/planned created (server dry run)\n")
    assert "set by the server: spec.workerGroupSpecs[0].numOfHosts=1" in dry.out
    assert fake.get("rayclusters", "planned", namespace) is None
    as_yaml = flarekit(fake, "cluster", "apply", "-f", str(config), "--dry-run=server",
                       "-o", "yaml", namespace=namespace)  # fmt: skip
    assert yaml.safe_load(as_yaml.out)["metadata"]["uid"]

    new = flarekit(fake, "cluster", "diff", "-f", str(config), namespace=namespace)
    assert new.code == 1 and "+    replicas: 2" in new.out, new

    applied = flarekit(fake, "cluster", "apply", "-f", str(config), namespace=namespace)
    assert applied.code == 0, applied
    stored = fake.get("rayclusters", "planned", namespace)
    assert stored is not None
    version = stored["metadata"]["resourceVersion"]

    same = flarekit(fake, "cluster", "diff", "-f", str(config), namespace=namespace)
    assert (same.code, same.out) == (0, ""), same
    changed = flarekit(fake, "cluster", "diff", "-f", str(config), "--num-workers", "3",
                       namespace=namespace)  # fmt: skip
    assert changed.code == 1, changed
    body = [line for line in changed.out.splitlines() if line[:1] in "+-" and line[:3] not in
            ("+++", "---")]  # fmt: skip
    assert body == ["-    replicas: 2", "+    replicas: 3"]
    after = fake.get("rayclusters", "planned", namespace)
    assert after is not None and after["metadata"]["resourceVersion"] == version


def test_diff_errors_exit_above_one(fake: FakeCluster, namespace: str) -> None:
    missing = flarekit(fake, "cluster", "diff", "x", "--local-queue", "nope", namespace=namespace)
    assert missing.code > 1 and missing.err.startswith("error: "), missing
    client_side = flarekit(fake, "cluster", "apply", "x", "--dry-run=client", namespace=namespace)
    assert client_side.code == ExitCode.USAGE_ERROR and "cluster render" in client_side.err
    bad = flarekit(fake, "cluster", "diff", "x", "--num-workers", "-1", namespace=namespace)
    assert bad.code == ExitCode.VALIDATION_ERROR
