"""A guided first run of flarekit: ``python -m flarekit.walkthrough``.

It walks a new user through the main job, printing each step and the code that does it:
Kueue admin setup (ResourceFlavor, ClusterQueue with quota, LocalQueue), a Ray cluster
(``ClusterConfiguration`` + ``Cluster.apply``), waiting for it, its details, a Ray job on it
(``RayJob``), a training job (``TrainJob`` from the ``torch-distributed`` runtime) submitted
to the queue, waiting for it and reading its logs, and a teardown that leaves nothing behind.

With no cluster configured it runs on a practice cluster (``flarekit_testing.FakeCluster``
with simulated operators whose pods run on this machine: the training function trains with
PyTorch, the Ray cluster is a local Ray, ``--seed`` picks the training data); with
``--kubeconfig`` (or
``$FLAREKIT_KUBECONFIG``) the same steps run on that cluster; with ``--real-stack`` on a real
control plane with the real operators, started on 127.0.0.1 (``flarekit_testing.ControlPlane``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit.walkthrough._main import KUBECONFIG_ENV as KUBECONFIG_ENV
    from flarekit.walkthrough._main import main as main
    from flarekit.walkthrough._main import parser as parser
    from flarekit.walkthrough._runtime import torch_distributed_runtime as torch_distributed_runtime
    from flarekit.walkthrough._steps import Plan as Plan
    from flarekit.walkthrough._steps import Walkthrough as Walkthrough

__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit.walkthrough._main": (
            "KUBECONFIG_ENV",
            "main",
            "parser",
        ),
        "flarekit.walkthrough._runtime": ("torch_distributed_runtime",),
        "flarekit.walkthrough._steps": (
            "Plan",
            "Walkthrough",
        ),
    },
)
