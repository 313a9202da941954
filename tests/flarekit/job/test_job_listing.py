"""Listing RayJobs and TrainJobs: a kind whose operator is not installed is skipped, any other
404 is reported, not taken for "not installed"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from flarekit import Client, NotFound, from_kubeconfig
from flarekit.job._listing import find_jobs
from flarekit_models.ray.v1 import RayJob
from flarekit_testing import FakeCluster


def rayjob(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"entrypoint": "python -c 'print(1)'", "clusterSelector": {"ray.io/cluster": "c"}},
    }


@pytest.fixture(scope="module")
def without_trainer() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kuberay": "v1.7.0"}) as fc:
        fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        fc.create(rayjob("one", "team"))
        yield fc


def test_a_kind_that_is_not_served_is_skipped(without_trainer: FakeCluster) -> None:
    client = Client(from_kubeconfig(without_trainer.kubeconfig_path))
    found = find_jobs(client, "team")
    assert [(j.status.kind, j.status.name) for j in found] == [("RayJob", "one")]
    assert find_jobs(client, "team", "trainjob") == []


def test_another_404_of_a_served_kind_is_raised(
    without_trainer: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 404 for a kind the cluster serves is the server's answer (a proxy in the way, a bug):
    # reported, not silently shown as an empty listing.
    client = Client(from_kubeconfig(without_trainer.kubeconfig_path))
    real_list = client.list

    def list_404(kind: Any, **kwargs: Any) -> Any:
        if kind is RayJob:
            from flarekit.client._errors import Operation

            raise NotFound(Operation("list", "rayjobs.ray.io", None, "team"), 404, "NotFound", "x")
        return real_list(kind, **kwargs)

    monkeypatch.setattr(client, "list", list_404)
    with pytest.raises(NotFound):
        find_jobs(client, "team")
