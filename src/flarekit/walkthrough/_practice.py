"""The practice cluster: FakeCluster with simulated KubeRay, Kueue, Trainer and AppWrapper.

Why: a new user should see the whole journey (queues, a Ray cluster, a training job, the
teardown) before they have a cluster. The simulated operators move objects through the
states the real ones report, on timings short enough that the walkthrough takes seconds, and
their pods print what the real ones would (the training job prints :func:`practice_log`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flarekit.walkthrough._train import practice_log

if TYPE_CHECKING:
    from flarekit.testing import FakeCluster

__all__ = ["leftovers", "start_practice_cluster"]

_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
#: What every fresh cluster has, and so is not a leftover.
_BUILTIN = frozenset({"namespaces"})
#: What a cluster puts in every namespace itself (the service account controller and the root
#: CA publisher): not left behind by the walkthrough. Events are the cluster's own records too.
_CLUSTER_MADE = frozenset({("serviceaccounts", "default"), ("configmaps", "kube-root-ca.crt")})


def _trainer_log(job: dict[str, Any], pod: dict[str, Any]) -> Iterable[str]:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if labels.get(_INDEX_LABEL, "0") != "0":
        return []  # only rank 0 prints
    nodes = int(((job.get("spec") or {}).get("trainer") or {}).get("numNodes") or 1)
    return practice_log(world=nodes)


def start_practice_cluster() -> FakeCluster:
    """A running FakeCluster with every simulated operator, on sub-second timings.

    Raises `RuntimeError` with the install command when the ``testing`` extra is missing.
    """
    try:
        from flarekit.testing import (
            AppWrapperController,
            FakeCluster,
            KueueController,
            RayClusterController,
            RayJobController,
            TrainJobController,
        )
    except ImportError as exc:
        raise RuntimeError(
            f"the practice cluster needs the 'testing' extra ({exc.name or exc} is missing): "
            "pip install 'flarekit[testing]', or point the walkthrough at a real cluster "
            "with --kubeconfig"
        ) from None
    cluster = FakeCluster(
        tick_interval=0.02,
        controllers=[
            KueueController(admit_after=0.2),
            RayClusterController(ready_after=0.3),
            TrainJobController(run_for=0.5, logs=_trainer_log),
            RayJobController(start_after=0.2, run_for=0.5),
            AppWrapperController(ready_after=0.2),
        ],
    )
    return cluster.start()


def leftovers(cluster: FakeCluster) -> list[str]:
    """Every object still stored, as ``kind namespace/name`` (namespaces do not count)."""
    found: list[str] = []
    for rt in cluster.registry:
        if (rt.plural in _BUILTIN and not rt.group) or rt.kind == "Event":
            continue
        resource = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
        for obj in cluster.objects(resource):
            meta = obj.get("metadata") or {}
            if not rt.group and (rt.plural, meta.get("name")) in _CLUSTER_MADE:
                continue
            where = f"{meta['namespace']}/" if meta.get("namespace") else ""
            found.append(f"{obj.get('kind')} {where}{meta.get('name')}")
    return sorted(found)
