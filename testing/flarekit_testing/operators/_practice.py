"""Every simulated operator at once, on the practice cluster's timings, optionally with local
execution shared between them.

Why: the practice cluster (``make run``, ``flarekit dev up``) and users' own tests want the
whole stack, KubeRay, Kueue, Trainer, the training operator and AppWrapper, with one switch
for running pods on this machine. The controllers share one `LocalKubelet`, so that a
RayJob's submitter reaches the Ray cluster another controller started, and a training job's
ranks find each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit_testing.apiserver import pods
from flarekit_testing.operators._appwrapper import AppWrapperController
from flarekit_testing.operators._base import SimController
from flarekit_testing.operators._kueue import KueueController
from flarekit_testing.operators._pods import kubelet_for
from flarekit_testing.operators._pytorchjob import PyTorchJobController
from flarekit_testing.operators._raycluster import RayClusterController
from flarekit_testing.operators._rayjob import RayJobController
from flarekit_testing.operators._trainjob import TrainJobController

if TYPE_CHECKING:
    from flarekit_testing.local import LocalKubelet

__all__ = ["practice_node_labels", "simulated_operators"]


def practice_node_labels() -> dict[str, dict[str, str]]:
    """The practice cluster's nodes, which are this machine: the well-known labels a kubelet
    sets (`FakeCluster(node_labels=...)`), so that a pod asking for any other node stays
    Pending, as it would on a cluster without such a node."""
    return {node: pods.node_labels(node) for node in pods.NODES}


def simulated_operators(local: bool | LocalKubelet = False) -> list[SimController]:
    """KubeRay, Kueue, Trainer, the training operator and AppWrapper, simulated on
    sub-second timings; with `local` (True, or a `LocalKubelet` to share) their pods run as
    processes on this machine where their program can run here::

        with FakeCluster(controllers=simulated_operators(local=True)) as fc:
            ...
    """
    kubelet = kubelet_for(local)
    return [
        KueueController(admit_after=0.2),
        RayClusterController(ready_after=0.3, local=kubelet or False),
        RayJobController(
            start_after=0.2, run_for=0.5, wait_for_cluster=True, local=kubelet or False
        ),
        TrainJobController(run_for=0.5, local=kubelet or False),
        PyTorchJobController(run_for=0.5, local=kubelet or False),
        AppWrapperController(ready_after=0.2),
    ]
