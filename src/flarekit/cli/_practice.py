"""The practice cluster behind ``flarekit dev up``: a FakeCluster with simulated operators
whose pods run on this machine, prepared the way a platform admin prepares a real cluster,
serving until it is told to stop.

Why: a new user should be able to run every example of the README, in a fresh shell, with
nothing but a ``KUBECONFIG``, and see it work. So this process starts the walkthrough's
practice cluster (simulated KubeRay, Kueue, Trainer and AppWrapper, with local execution:
training pods run as processes here, Ray clusters are local Ray with their dashboard on
127.0.0.1, exposed by an Ingress; see `flarekit_testing.local`) and adds what an admin would
have set up:

- namespace ``team-a``, the kubeconfig context's namespace;
- a ResourceFlavor, a ClusterQueue ``team-a-cq`` with quota, and LocalQueue ``team-a-queue``,
  marked as the namespace's default;
- the ``torch-distributed`` ClusterTrainingRuntime.

``python -m flarekit.cli._practice DIR`` runs it: it writes ``DIR/kubeconfig``, then
``DIR/ready`` (its pid and the API server's URL), and serves until SIGTERM or SIGINT, when it
stops the cluster (and every process its pods started) and removes both files.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import flarekit
import flarekit.walkthrough
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit import Client
    from flarekit_testing import FakeCluster

__all__ = ["NAMESPACE", "QUEUE", "practice_cluster", "prepare", "serve"]

NAMESPACE = "team-a"
QUEUE = "team-a-queue"


def prepare(client: Client) -> None:
    """What an admin sets up before users arrive: namespace, queues, training runtime."""
    client.apply(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name=NAMESPACE)))
    quota: dict[str, int | str] = {"cpu": 64, "memory": "256Gi", "nvidia.com/gpu": 8}
    flarekit.apply_all(
        client,
        [
            flarekit.ResourceFlavorSpec("default-flavor", node_labels={}),
            flarekit.ClusterQueueSpec("team-a-cq", flavors={"default-flavor": quota}),
            flarekit.LocalQueueSpec(QUEUE, NAMESPACE, "team-a-cq", default=True),
        ],
    )
    client.apply(
        trainer_v1alpha1.ClusterTrainingRuntime.model_validate(
            flarekit.walkthrough.torch_distributed_runtime()
        )
    )


@contextlib.contextmanager
def practice_cluster(kubeconfig: Path, local: bool = True) -> Iterator[FakeCluster]:
    """The prepared practice cluster, serving while the block runs (its pods run here unless
    `local` is False), with a kubeconfig for it (context namespace ``team-a``) written to
    `kubeconfig` and removed at the end."""
    import yaml

    fake = flarekit.walkthrough.backends.start_practice_cluster(local=local)
    try:
        prepare(flarekit.Client(flarekit.from_kubeconfig(fake.kubeconfig_path)))
        config = yaml.safe_load(fake.kubeconfig_path.read_text(encoding="utf-8"))
        for context in config["contexts"]:
            context["context"]["namespace"] = NAMESPACE
        kubeconfig.write_text(yaml.safe_dump(config), encoding="utf-8")
        kubeconfig.chmod(0o600)
        yield fake
    finally:
        kubeconfig.unlink(missing_ok=True)
        fake.stop()


def serve(directory: Path) -> int:
    """Run the practice cluster until SIGTERM/SIGINT; returns the exit status."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    ready = directory / "ready"
    with practice_cluster(directory / "kubeconfig") as fake:
        try:
            ready.write_text(json.dumps({"pid": os.getpid(), "server": fake.url}), "utf-8")
            stop.wait()
        finally:
            ready.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(serve(Path(sys.argv[1])))
