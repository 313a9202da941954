"""Clusters in known states for the widget tests, made through the facade."""

from __future__ import annotations

from flarekit import Client, Cluster, ClusterConfiguration, ClusterState, TerminalFailure
from flarekit._wait import wait_until


def make_cluster(client: Client, namespace: str, name: str, *, queue: str | None = None) -> Cluster:
    """Apply cluster `name` and wait for the state the fake's operators give it: READY, FAILED
    (``broken*``) or QUEUED (with `queue`)."""
    config = ClusterConfiguration(name=name, namespace=namespace, num_workers=1, local_queue=queue)
    cluster = Cluster(config, client)
    cluster.apply()
    if queue is not None:
        wait_until(
            cluster.status,
            lambda s: s.state is ClusterState.QUEUED,
            None,
            timeout=30,
            describe=f"{name} to be queued",
            poll=0.01,
            progress=False,
        )
        return cluster
    try:
        cluster.wait_ready(timeout=30, poll=0.01, max_poll=0.05, progress=False)
    except TerminalFailure:
        assert name.startswith("broken")
    return cluster


def three_clusters(client: Client, namespace: str) -> dict[str, ClusterState]:
    """A ready, a failed and a queued cluster; their expected states by name."""
    make_cluster(client, namespace, "alpha")
    make_cluster(client, namespace, "broken-beta")
    make_cluster(client, namespace, "gamma", queue="waiting")
    return {
        "alpha": ClusterState.READY,
        "broken-beta": ClusterState.FAILED,
        "gamma": ClusterState.QUEUED,
    }
