"""The practice cluster behind ``flarekit dev up``: a FakeCluster with simulated operators,
prepared the way a platform admin prepares a real cluster, serving until it is told to stop.

Why: a new user should be able to run every example of the README, in a fresh shell, with
nothing but a ``KUBECONFIG``. So this process starts the walkthrough's practice cluster
(simulated KubeRay, Kueue, Trainer and AppWrapper: objects move through the states the real
operators report, nothing runs in the pods) and adds what an admin would have set up:

- namespace ``team-a``, the kubeconfig context's namespace;
- a ResourceFlavor, a ClusterQueue ``team-a-cq`` with quota, and LocalQueue ``team-a-queue``,
  marked as the namespace's default;
- the ``torch-distributed`` ClusterTrainingRuntime;
- dashboards exposed as a platform operator would (OpenShift AI's makes a Route per Ray
  cluster): every RayCluster gets an Ingress to its head Service's dashboard port. The
  hosts are under ``.practice.invalid``: nothing answers there, and each Ingress says so in
  an annotation.

``python -m flarekit.cli._practice DIR`` runs it: it writes ``DIR/kubeconfig``, then
``DIR/ready`` (its pid and the API server's URL), and serves until SIGTERM or SIGINT, when it
stops the cluster and removes both files.
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
import flarekit.cluster
import flarekit.walkthrough
import flarekit.walkthrough.backends
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1
from flarekit_models.networking import v1 as networking_v1
from flarekit_models.ray import v1 as ray_v1
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit import Client
    from flarekit_models.ray.v1 import RayCluster
    from flarekit_testing import FakeCluster

__all__ = [
    "NAMESPACE",
    "QUEUE",
    "SIMULATED_NOTE",
    "expose_dashboards",
    "practice_cluster",
    "prepare",
    "serve",
]

NAMESPACE = "team-a"
QUEUE = "team-a-queue"
DASHBOARD_DOMAIN = "practice.invalid"
SIMULATED_NOTE = (
    "made by the practice cluster's stand-in for a platform that exposes Ray dashboards; "
    "nothing answers at this host"
)
_NOTE_ANNOTATION = "flarekit.dev/simulated"


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


def _ingress(cluster: RayCluster) -> networking_v1.Ingress:
    meta = cluster.metadata
    assert meta is not None and meta.name and meta.namespace and meta.uid
    owner = meta_v1.OwnerReference(
        api_version="ray.io/v1", kind="RayCluster", name=meta.name, uid=meta.uid
    )
    backend = networking_v1.IngressBackend(
        service=networking_v1.IngressServiceBackend(
            name=flarekit.cluster.head_service_name(cluster, meta.name),
            port=networking_v1.ServiceBackendPort(number=flarekit.cluster.DEFAULT_DASHBOARD_PORT),
        )
    )
    path = networking_v1.HTTPIngressPath(path="/", path_type="Prefix", backend=backend)
    rule = networking_v1.IngressRule(
        host=f"{meta.name}-{meta.namespace}.{DASHBOARD_DOMAIN}",
        http=networking_v1.HTTPIngressRuleValue(paths=[path]),
    )
    return networking_v1.Ingress(
        metadata=meta_v1.ObjectMeta(
            name=f"{meta.name}-dashboard",
            namespace=meta.namespace,
            annotations={_NOTE_ANNOTATION: SIMULATED_NOTE},
            owner_references=[owner],
        ),
        spec=networking_v1.IngressSpec(rules=[rule]),
    )


def expose_dashboards(client: Client, stop: threading.Event) -> None:
    """Give every RayCluster an Ingress to its dashboard, and remove it with the cluster,
    until `stop` is set. The Ingress is owned by the cluster, so the garbage collector would
    remove it too (FakeCluster's as a real one's); deleting it here makes it go at once."""
    while not stop.is_set():
        for event in client.watch(
            ray_v1.RayCluster, namespace=flarekit.ALL_NAMESPACES, timeout=1.0
        ):
            ingress = _ingress(event.object)
            meta = ingress.metadata
            assert meta is not None and meta.name is not None
            if event.type == "DELETED":
                with contextlib.suppress(flarekit.NotFound):
                    client.delete(networking_v1.Ingress, meta.name, namespace=meta.namespace)
            elif event.type == "ADDED":
                client.apply(ingress)
            if stop.is_set():
                return


@contextlib.contextmanager
def practice_cluster(kubeconfig: Path) -> Iterator[FakeCluster]:
    """The prepared practice cluster, serving while the block runs, with a kubeconfig for it
    (context namespace ``team-a``) written to `kubeconfig` and removed at the end."""
    import yaml

    fake = flarekit.walkthrough.backends.start_practice_cluster()
    stop = threading.Event()
    exposer: threading.Thread | None = None
    try:
        client = flarekit.Client(flarekit.from_kubeconfig(fake.kubeconfig_path))
        prepare(client)
        config = yaml.safe_load(fake.kubeconfig_path.read_text(encoding="utf-8"))
        for context in config["contexts"]:
            context["context"]["namespace"] = NAMESPACE
        kubeconfig.write_text(yaml.safe_dump(config), encoding="utf-8")
        kubeconfig.chmod(0o600)
        exposer = threading.Thread(
            target=expose_dashboards, args=(client, stop), name="dashboards", daemon=True
        )
        exposer.start()
        yield fake
    finally:
        stop.set()
        if exposer is not None:
            exposer.join(timeout=5)
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
