"""The simulated Kueue reports its queues' usage, as Kueue does: a queue listing shows what
admitted work uses, and gives it back when the work is gone."""

from __future__ import annotations

from pathlib import Path

from flarekit import Client, Cluster, ClusterConfiguration, from_kubeconfig, list_queues
from flarekit.cli._practice import practice_cluster
from wait_support import wait_until


def test_admitted_work_shows_in_the_queue_listing(tmp_path: Path) -> None:
    with practice_cluster(tmp_path / "kubeconfig", local=False):
        client = Client(from_kubeconfig(tmp_path / "kubeconfig"))
        (idle,) = list_queues(client)
        assert (idle.name, idle.admitted, idle.pending) == ("team-a-queue", 0, 0)
        assert "default-flavor/cpu 0/64" in idle.usage_text()

        config = ClusterConfiguration(name="busy", num_workers=2, worker_cpu_requests=2,
                                      worker_cpu_limits=2, head_cpu_requests=1,
                                      head_cpu_limits=1)  # fmt: skip
        cluster = Cluster(config, client).apply()
        cluster.wait_ready(timeout=30, progress=False)
        wait_until(
            lambda: list_queues(client)[0].admitted == 1, "the queue counts the cluster", poll=0.05
        )
        (busy,) = list_queues(client)
        assert "default-flavor/cpu 5/64" in busy.usage_text(), busy.usage_text()
        assert "5 of 64 used" in str(busy)

        cluster.down(wait=True, progress=False)
        wait_until(
            lambda: list_queues(client)[0].admitted == 0, "the quota is given back", poll=0.05
        )
        assert "default-flavor/cpu 0/64" in list_queues(client)[0].usage_text()
