"""Simulated operators for FakeCluster: KubeRay, Kueue, Kubeflow Trainer (v2), the training
operator (v1) and AppWrapper, each a `SimController` that drives objects on a schedule.

They are off unless registered (`FakeCluster(controllers=[...])`; `simulated_operators()`
gives all of them, with `local=True` for local execution of their pods, see
`flarekit_testing.local`). Every line they write into a pod's log themselves says that it is
simulated. A container's `FLAREKIT_SIMULATED_EXIT_CODE` and
`FLAREKIT_SIMULATED_DURATION` ask for a failure or a long run, the same way on FakeCluster and
on ControlPlane's KWOK nodes.
"""

from flarekit_testing.operators._appwrapper import AppWrapperController
from flarekit_testing.operators._base import ManualClock, SimController
from flarekit_testing.operators._kueue import KueueController
from flarekit_testing.operators._outcome import DURATION_ENV, EXIT_CODE_ENV
from flarekit_testing.operators._outcome import duration as simulated_duration
from flarekit_testing.operators._outcome import exit_code as simulated_exit_code
from flarekit_testing.operators._practice import practice_node_labels, simulated_operators
from flarekit_testing.operators._pytorchjob import PyTorchJobController
from flarekit_testing.operators._raycluster import RayClusterController
from flarekit_testing.operators._rayjob import RayJobController
from flarekit_testing.operators._trainjob import TrainJobController

__all__ = [
    "DURATION_ENV",
    "EXIT_CODE_ENV",
    "AppWrapperController",
    "KueueController",
    "ManualClock",
    "PyTorchJobController",
    "RayClusterController",
    "RayJobController",
    "SimController",
    "TrainJobController",
    "practice_node_labels",
    "simulated_duration",
    "simulated_exit_code",
    "simulated_operators",
]
