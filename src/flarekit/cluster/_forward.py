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

import contextlib
import os
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from flarekit.cluster._endpoints import RayClientUnavailable, client_address
from flarekit_models.core import v1 as core_v1

if TYPE_CHECKING:
    from flarekit.client import Client, PortForward
    from flarekit_models.core.v1 import Pod, ServicePort

__all__ = [
    "ClientForward",
    "forward_target",
    "head_pod",
    "in_a_pod",
    "open_head_forward",
    "pod_port",
    "scoped_client_url",
]

HEAD_SELECTOR = "ray.io/node-type=head"


def in_a_pod() -> bool:
    """Whether this process runs in a Kubernetes pod (where the head Service is reachable
    as it is, and a forward through the API server would only be a detour)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def head_pod(client: Client, namespace: str, cluster: str) -> core_v1.Pod:
    """The head pod of `cluster` that runs (not being deleted); `RayClientUnavailable` when
    there is none."""
    pods = list(
        client.list(
            core_v1.Pod,
            namespace=namespace,
            label_selector=f"ray.io/cluster={cluster},{HEAD_SELECTOR}",
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


class ClientForward:
    """The forward behind `Cluster.local_client_url()`, owned by one `Cluster` object: reused
    while the same head pod runs, closed by `close()` or with its owner."""

    def __init__(self) -> None:
        self._forward: PortForward | None = None
        self._finalizer: weakref.finalize[[], object] | None = None

    def url(
        self, owner: object, client: Client, namespace: str, name: str, port_forward: bool | None
    ) -> str:
        """`Cluster.local_client_url()` of cluster `name` (see there)."""
        address = client_address(client, namespace, name)
        if address.exposed_host:
            return f"ray://{address.exposed_host}"
        forward = not in_a_pod() if port_forward is None else port_forward
        if not forward:
            return address.in_cluster
        pod, port = forward_target(client, namespace, name, address.port)
        current = self._forward
        if current is None or current.closed or (current.pod, current.port) != (pod, port):
            self.close()  # none yet, or the head pod was replaced
            current = client.port_forward(pod, port, namespace=namespace).start()
            self._forward = current
            self._finalizer = weakref.finalize(owner, current.close)
        return f"ray://127.0.0.1:{current.local_port}"

    def close(self) -> None:
        forward, self._forward = self._forward, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if forward is not None:
            forward.close()


@contextlib.contextmanager
def scoped_client_url(client: Client, namespace: str, name: str) -> Iterator[str]:
    """`Cluster.local_client()` of cluster `name` (see there)."""
    address = client_address(client, namespace, name)
    if address.exposed_host:
        yield f"ray://{address.exposed_host}"
        return
    pod, port = forward_target(client, namespace, name, address.port)
    with client.port_forward(pod, port, namespace=namespace) as forward:
        yield f"ray://127.0.0.1:{forward.local_port}"
