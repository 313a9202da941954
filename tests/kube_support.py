"""Set-up shared by the tests that drive flarekit against a FakeCluster or the real control
plane (both offer `create`, `get`, `resource`, `requests` and a kubeconfig): a client, a fresh
namespace, Kueue queues as a platform admin makes them, and the count of writes a server saw.

The objects are seeded directly into the server, not through flarekit, so that a test of the
facade does not depend on the facade to set itself up.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from flarekit import Client, RetryPolicy, from_kubeconfig
from flarekit_testing import ClusterBackend

JSON = dict[str, Any]
Server = ClusterBackend

#: The label that puts a workload in a Kueue LocalQueue, as Kueue names it.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
#: Retries without real waiting: the first backoff is a millisecond.
FAST_RETRY = RetryPolicy(attempts=3, backoff=0.001, max_backoff=0.01)
#: What the queues admit by default: plenty of each (memory in bytes would be enforced by the
#: real Kueue, hence Gi).
PLENTY = {"cpu": "1000", "memory": "1000Gi", "nvidia.com/gpu": "1000"}

_names = itertools.count()


def client_for(server: Server, **options: Any) -> Client:
    """A flarekit `Client` of `server` through its kubeconfig (namespace ``default``), retrying
    without waiting; `options` are `Client`'s (``retry=``, ``namespace=``...)."""
    options.setdefault("retry", FAST_RETRY)
    return Client(from_kubeconfig(server.kubeconfig_path), **options)


def new_namespace(server: Server, prefix: str = "ns") -> str:
    """A namespace no other test uses."""
    name = f"{prefix}{next(_names)}"
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def kueue_api(server: Server) -> str:
    """Kueue's group/version the server stores (v1beta1 or v1beta2, by release)."""
    return "kueue.x-k8s.io/" + server.resource("clusterqueues").storage_version


def cluster_queue(
    server: Server,
    name: str = "cq",
    *,
    flavor: str = "flavor",
    quota: Mapping[str, str] = PLENTY,
    make_flavor: bool = True,
) -> None:
    """ResourceFlavor `flavor` (unless `make_flavor` is False: the queue then names a flavor
    that does not exist) and ClusterQueue `name` admitting every namespace, with `quota` of
    each resource; each made only if missing."""
    api = kueue_api(server)
    if make_flavor and server.get("resourceflavors", flavor) is None:
        server.create({"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": flavor}})
    if server.get("clusterqueues", name) is not None:
        return
    resources = [{"name": r, "nominalQuota": q} for r, q in quota.items()]
    group = {"coveredResources": list(quota), "flavors": [{"name": flavor, "resources": resources}]}
    server.create(
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, "resourceGroups": [group]},
        }
    )


def local_queue(
    server: Server,
    namespace: str,
    name: str = "lq",
    cluster_queue: str = "cq",
    *,
    default: bool = False,
) -> JSON:
    """LocalQueue `name` in `namespace` pointing to `cluster_queue` (`default`: marked as the
    namespace's default queue)."""
    meta: JSON = {"name": name, "namespace": namespace}
    if default:
        meta["annotations"] = {"kueue.x-k8s.io/default-queue": "true"}
    return server.create(
        {
            "apiVersion": kueue_api(server),
            "kind": "LocalQueue",
            "metadata": meta,
            "spec": {"clusterQueue": cluster_queue},
        }
    )


def seed_queues(
    server: Server,
    namespace: str,
    *local_queues: str,
    cluster_queue_name: str = "cq",
    flavor: str = "flavor",
    quota: Mapping[str, str] = PLENTY,
    make_flavor: bool = True,
    default: bool = False,
) -> None:
    """`cluster_queue` (made once) and LocalQueues `local_queues` (default: ``lq``) in
    `namespace` pointing to it (`default`: marked as the namespace's default queue)."""
    cluster_queue(server, cluster_queue_name, flavor=flavor, quota=quota, make_flavor=make_flavor)
    for name in local_queues or ("lq",):
        local_queue(server, namespace, name, cluster_queue_name, default=default)


def writes(server: Server, since: int = 0) -> int:
    """Requests the server received (from the `since`-th on) that could change something:
    anything but a GET."""
    return sum(1 for r in server.requests[since:] if r.method != "GET")
