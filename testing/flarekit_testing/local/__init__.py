"""Local execution: the pods of the simulated operators run as processes on this machine.

`LocalKubelet` runs a pod's program (and Ray's pods as real Ray nodes, `LocalRay`) behind the
same Kubernetes objects the operators make; `ensure_torch` installs PyTorch for local pods
into the user's cache once; `cannot_run` reasons say which pods stay simulated.
"""

from flarekit_testing.local._kubelet import LocalKubelet, LocalRunError
from flarekit_testing.local._ray import LocalRay
from flarekit_testing.local._torch import ensure as ensure_torch
from flarekit_testing.local._torch import find as find_torch

__all__ = ["LocalKubelet", "LocalRay", "LocalRunError", "ensure_torch", "find_torch"]
