"""The practice cluster: FakeCluster with simulated KubeRay, Kueue, Trainer and AppWrapper,
whose pods run on this machine.

Why: a new user should see the whole journey (queues, a Ray cluster, a training job, a Ray
job, the teardown) before they have a cluster, and see it work: the simulated operators move
objects through the states the real ones report, and local execution
(`flarekit_testing.local`) runs their pods as processes here, so the training job trains
with PyTorch on CPU and the Ray cluster is a real local Ray. What cannot run here (an image's
own entrypoint, a GPU) stays simulated, and says so.
"""

from __future__ import annotations

import flarekit_testing.local
from flarekit.client import GenericResource
from flarekit_models.meta.v1 import ObjectMeta
from flarekit_testing import FakeCluster, practice_node_labels, simulated_operators

__all__ = ["ensure_torch", "leftovers", "start_practice_cluster"]

#: What every fresh cluster has, and so is not a leftover.
_BUILTIN = frozenset({"namespaces"})
#: What a cluster puts in every namespace itself (the service account controller and the root
#: CA publisher): not left behind by the walkthrough. Events are the cluster's own records too.
_CLUSTER_MADE = frozenset({("serviceaccounts", "default"), ("configmaps", "kube-root-ca.crt")})


def start_practice_cluster(local: bool = True) -> FakeCluster:
    """A running FakeCluster with every simulated operator on sub-second timings, its pods
    run on this machine (`local`).

    Raises `RuntimeError` with the install command when the ``testing`` extra is missing
    (see `flarekit.walkthrough.backends`).
    """
    cluster = FakeCluster(
        tick_interval=0.05,
        controllers=simulated_operators(local=local),
        node_labels=practice_node_labels(),  # its nodes are this machine
    )
    return cluster.start()


def ensure_torch(quiet: bool = False) -> str:
    """PyTorch for the practice cluster's training pods: the cached virtualenv, installed
    first when missing (the installer's progress on stderr); returns its folder."""
    return str(flarekit_testing.local.ensure_torch(quiet=quiet))


def leftovers(cluster: FakeCluster) -> list[str]:
    """Every object still stored, as ``kind namespace/name`` (namespaces do not count)."""
    found: list[str] = []
    for rt in cluster.registry:
        if (rt.plural in _BUILTIN and not rt.group) or rt.kind == "Event":
            continue
        resource = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
        for stored in cluster.objects(resource):
            obj = GenericResource.model_validate(stored)
            meta = obj.metadata or ObjectMeta()
            if not rt.group and (rt.plural, meta.name) in _CLUSTER_MADE:
                continue
            where = f"{meta.namespace}/" if meta.namespace else ""
            found.append(f"{obj.kind} {where}{meta.name}")
    return sorted(found)
