"""`Client.update`: read, change, replace, and on a conflicting change in between read again
and retry (client-go's RetryOnConflict), so a concurrent writer's change is never lost."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import pytest
from client_support import cluster, fc, raycluster  # noqa: F401

from flarekit import Client, Conflict, from_kubeconfig
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster
from kube_support import FAST_RETRY


def _label(obj: RayCluster, key: str, value: str) -> None:
    assert obj.metadata is not None
    obj.metadata.labels = {**(obj.metadata.labels or {}), key: value}


def test_a_change_made_in_between_is_kept_and_the_update_retried(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    client.create(raycluster("u"), namespace=ns)
    calls = 0

    def change(obj: RayCluster) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # someone else writes after our read
            client.patch(RayCluster, "u", {"metadata": {"labels": {"other": "x"}}}, namespace=ns)
        _label(obj, "mine", "y")

    with Client(from_kubeconfig(cluster.kubeconfig_path), retry=FAST_RETRY) as fast:
        stored = fast.update(RayCluster, "u", change, namespace=ns)
    assert calls == 2
    assert stored.metadata is not None and stored.metadata.labels == {"other": "x", "mine": "y"}


def test_conflicts_beyond_the_attempts_are_raised(client: Client, ns: str) -> None:
    client.create(raycluster("busy"), namespace=ns)

    def always_raced(obj: RayCluster) -> RayCluster:
        client.patch(RayCluster, "busy", {"metadata": {"labels": {"n": "1"}}}, namespace=ns)
        client.patch(RayCluster, "busy", {"metadata": {"labels": {"n": "2"}}}, namespace=ns)
        return obj

    with pytest.raises(Conflict):
        client.update(RayCluster, "busy", always_raced, namespace=ns, attempts=2)
