"""Port-forwards to a Ray cluster's head pod, and the Ray client address one of them backs.

Why: a user on a laptop wants ``ray.init(cluster.local_client_url())`` to work on a cluster
that no Route or Ingress exposes, as `kubectl port-forward` makes it work by hand. The head
Service's client port leads to a port of the head pod (its ``targetPort``, a number or the
name of a container port); the forward goes to that port of the head pod that runs, through
the API server (`Client.port_forward`).

Lifetime: the forward behind `Cluster.local_client_url()` belongs to the `Cluster` object.
Later calls reuse it while the same head pod runs; `Cluster.close()` (or leaving
``with Cluster(...)``, or `down()`) closes it, and so does the object's garbage collection, so
no thread or socket outlives it. `Cluster.local_client()` is the scoped form: a ``with`` block
whose forward ends with the block.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from flarekit.cluster._client_url import RayClientUnavailable

if TYPE_CHECKING:
    from flarekit.client._client import Client
    from flarekit.client._portforward import PortForward
    from flarekit_models.core.v1 import Pod, ServicePort

__all__ = ["forward_target", "head_pod", "in_a_pod", "open_head_forward", "pod_port"]

HEAD_SELECTOR = "ray.io/node-type=head"


def in_a_pod() -> bool:
    """Whether this process runs in a Kubernetes pod (where the head Service is reachable
    as it is, and a forward through the API server would only be a detour)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def head_pod(client: Client, namespace: str, cluster: str) -> Pod:
    """The head pod of `cluster` that runs (not being deleted); `RayClientUnavailable` when
    there is none."""
    from flarekit_models.core.v1 import Pod

    pods = list(
        client.list(
            Pod, namespace=namespace, label_selector=f"ray.io/cluster={cluster},{HEAD_SELECTOR}"
        )
    )
    for pod in pods:
        running = pod.status is not None and pod.status.phase == "Running"
        if running and pod.metadata is not None and not pod.metadata.deletion_timestamp:
            return pod
    phases = ", ".join(
        f"{p.metadata.name if p.metadata else '?'} is {(p.status.phase if p.status else None)}"
        for p in pods
    )
    raise RayClientUnavailable(
        namespace,
        cluster,
        "",
        f"no head pod runs ({phases or 'there is none'}); a port-forward needs the running "
        "head pod (wait_ready() waits for it)",
    )


def pod_port(service_port: ServicePort, pod: Pod) -> int:
    """The pod's port a Service port leads to: its ``targetPort`` as a number, or the head
    container port of that name, or (without one) the Service port's own number."""
    target = service_port.target_port
    if target is None:
        return service_port.port
    if isinstance(target, int) or str(target).isdigit():
        return int(target)
    for container in (pod.spec.containers if pod.spec else None) or []:
        for port in container.ports or []:
            if port.name == target:
                return port.container_port
    name = pod.metadata.name if pod.metadata else "?"
    raise RayClientUnavailable(
        pod.metadata.namespace or "" if pod.metadata else "",
        "",
        "",
        f"the head Service's client port targets the port named {target!r}, which no "
        f"container of pod {name!r} declares",
    )


def forward_target(
    client: Client, namespace: str, cluster: str, service_port: ServicePort
) -> tuple[str, int]:
    """The running head pod's name and the port of it that `service_port` leads to."""
    pod = head_pod(client, namespace, cluster)
    return str(pod.metadata.name if pod.metadata else ""), pod_port(service_port, pod)


def open_head_forward(
    client: Client, namespace: str, cluster: str, port: int, *, local_port: int = 0
) -> PortForward:
    """A port-forward (not started) to `port` of the cluster's running head pod."""
    pod = head_pod(client, namespace, cluster)
    name = str(pod.metadata.name if pod.metadata else "")
    return client.port_forward(name, port, namespace=namespace, local_port=local_port)
