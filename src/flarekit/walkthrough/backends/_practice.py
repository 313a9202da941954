"""The practice cluster: FakeCluster with simulated KubeRay, Kueue, Trainer and AppWrapper.

Why: a new user should see the whole journey (queues, a Ray cluster, a training job, the
teardown) before they have a cluster. The simulated operators move objects through the
states the real ones report, on timings short enough that the walkthrough takes seconds. Their
pods run nothing: the training job's pod says so (:func:`practice_log`) instead of showing
training output nobody computed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import flarekit.client
from flarekit._objects import labels_of
from flarekit.walkthrough._train import practice_log
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1
from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)

if TYPE_CHECKING:
    from flarekit._json import JsonObject

__all__ = ["leftovers", "start_practice_cluster"]

_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
#: What every fresh cluster has, and so is not a leftover.
_BUILTIN = frozenset({"namespaces"})
#: What a cluster puts in every namespace itself (the service account controller and the root
#: CA publisher): not left behind by the walkthrough. Events are the cluster's own records too.
_CLUSTER_MADE = frozenset({("serviceaccounts", "default"), ("configmaps", "kube-root-ca.crt")})


def _trainer_log(job: JsonObject, pod: JsonObject) -> Iterable[str]:
    """The simulated trainer's log lines (the emulator hands over the stored JSON)."""
    if labels_of(core_v1.Pod.model_validate(pod)).get(_INDEX_LABEL, "0") != "0":
        return []  # only rank 0 prints
    spec = trainer_v1alpha1.TrainJob.model_validate(job).spec
    trainer = spec.trainer if spec is not None else None
    return practice_log(world=(trainer.num_nodes if trainer is not None else None) or 1)


def start_practice_cluster() -> FakeCluster:
    """A running FakeCluster with every simulated operator, on sub-second timings.

    Raises `RuntimeError` with the install command when the ``testing`` extra is missing
    (see `flarekit.walkthrough.backends`).
    """
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
        for stored in cluster.objects(resource):
            obj = flarekit.client.GenericResource.model_validate(stored)
            meta = obj.metadata or meta_v1.ObjectMeta()
            if not rt.group and (rt.plural, meta.name) in _CLUSTER_MADE:
                continue
            where = f"{meta.namespace}/" if meta.namespace else ""
            found.append(f"{obj.kind} {where}{meta.name}")
    return sorted(found)
