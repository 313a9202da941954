"""The walkthrough (`make run`) on a user's cluster: every step, the admin setup included, and
its teardown, after which nothing it made is left (on the control plane: as the real operators
and the garbage collector leave it)."""

from __future__ import annotations

import pytest
from e2e_support import Backend

from flarekit.walkthrough import main

#: What the walkthrough makes in the namespace, directly or through the operators.
MADE = ("rayclusters", "rayjobs", "trainjobs", "jobsets", "workloads", "localqueues", "appwrappers")
#: And cluster-wide, named after it.
CLUSTER_WIDE = ("clusterqueues", "resourceflavors")


def _left(backend: Backend, namespace: str) -> list[str]:
    found = [
        f"{resource}/{o['metadata']['name']}"
        for resource in MADE
        for o in backend.objects(resource, namespace)
    ]
    found += [
        f"{resource}/{o['metadata']['name']}"
        for resource in CLUSTER_WIDE
        for o in backend.objects(resource)
        if o["metadata"]["name"].startswith("walkthrough")
    ]
    found += [f"pods/{p['metadata']['name']}" for p in backend.objects("pods", namespace)]
    return found


def test_the_walkthrough_runs_and_leaves_nothing(
    backend: Backend, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "--kubeconfig", str(backend.cluster.kubeconfig_path), "--namespace", namespace,
        "--setup-queues", "--timeout", str(backend.timeout), "--poll", str(backend.poll),
    ]  # fmt: skip
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "Succeeded" in out.out
    backend.wait(lambda: not _left(backend, namespace), "nothing of the walkthrough left")
