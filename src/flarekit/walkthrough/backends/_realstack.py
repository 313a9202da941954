"""The real stack: the walkthrough on a real Kubernetes control plane with the real operators.

Why: the practice cluster's operators are simulations we wrote. ``--real-stack`` runs the same
steps on `flarekit_testing.ControlPlane`: etcd, kube-apiserver, controller-manager and
scheduler on 127.0.0.1, with the real Kueue, KubeRay, JobSet and Kubeflow Trainer controllers
of the pinned releases (built by ``make control-plane``), and one real node (containerd, the
kubelet, kube-proxy and CoreDNS, built by ``make real-node``) where the Ray cluster and the
training job run in containers. Where no real node can run (not root, or not built), its nodes
are KWOK's: pods are scheduled and reported Running, but no container runs, and each one's log
says exactly that. The teardown check reads the cluster through the
API (:class:`~flarekit.walkthrough._footprint.Footprint`): nothing the walkthrough made, or
made the operators make, may be left.
"""

from __future__ import annotations

import os
import time

from flarekit_testing import AssetsNotFound, ControlPlane, OperatorNotBuilt
from flarekit_testing.controlplane import NodeNotReady, find_node_assets

__all__ = ["OPERATORS", "start_real_stack", "stop_real_stack", "why_no_real_node"]

#: The operators the walkthrough's steps need: Kueue admits the Ray cluster and the TrainJob,
#: KubeRay runs the Ray cluster, Trainer runs the TrainJob as a JobSet.
OPERATORS = ("kueue", "kuberay", "jobset", "trainer")


def start_real_stack() -> ControlPlane:
    """A started ControlPlane with :data:`OPERATORS` at their newest built releases.

    Raises `RuntimeError` saying what to do when the control plane's programs or an
    operator's build is missing (and, through `flarekit.walkthrough.backends`, when the
    ``testing`` extra is).
    """
    try:
        kubelet = not why_no_real_node()
        plane = ControlPlane(operators=OPERATORS, start_timeout=600.0, kubelet=kubelet)
        return plane.start()
    except (AssetsNotFound, OperatorNotBuilt) as exc:
        raise RuntimeError(
            f"the real stack cannot start: {exc} (or run the walkthrough without --real-stack)"
        ) from None


def why_no_real_node() -> str:
    """What a real node lacks here (root, Debian's containerd, `make real-node`), or ""."""
    try:
        find_node_assets()
    except NodeNotReady as exc:
        return str(exc)
    return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user took the number
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return True  # no /proc: the signal check above is all there is


def stop_real_stack(plane: ControlPlane, timeout: float = 10.0) -> list[str]:
    """Stop every process of `plane` and remove its directory; returns what survived
    (processes still running after `timeout` seconds, the directory), empty when nothing."""
    plane.stop()
    deadline = time.monotonic() + timeout
    while True:
        running = [f"{name} (pid {pid})" for name, pid in plane.started_pids.items() if _alive(pid)]
        if not running or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    left = [f"process {item}" for item in running]
    if plane.last_directory is not None and plane.last_directory.exists():
        left.append(f"directory {plane.last_directory}")
    return left
