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

from flarekit.walkthrough._main import KUBECONFIG_ENV, main, parser
from flarekit.walkthrough._steps import Plan, Walkthrough

__all__ = ["KUBECONFIG_ENV", "Plan", "Walkthrough", "main", "parser"]
