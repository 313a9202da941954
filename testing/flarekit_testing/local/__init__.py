"""Local execution: the pods of simulated operators run as processes on this machine."""

from flarekit_testing.local._kubelet import LocalKubelet

__all__ = ["LocalKubelet"]
