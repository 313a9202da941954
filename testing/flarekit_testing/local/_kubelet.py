"""Local execution: the pods of the simulated operators run as processes on this machine.

Why: a data scientist wants to see `TrainJob(func=train)` train and a `RayJob` run for real
on a laptop, through the same Kubernetes objects it would create on a cluster (so the code
that submits, waits, reads logs and stops is the code that will run there), as the Kubeflow
SDK's local backend does for TrainJobs, but without leaving the Kubernetes API. The simulated
operators make their pods as the real ones would; this kubelet runs each pod's first
container (see `_pod_setup` for its folder, environment and command line, `_ray` for Ray's
pods), under a supervisor (`_shim`) in a process group of its own, with the pod's CPU and
memory limits where the system lets it set them (`_limits`):

- stdout and stderr become the container's log, line by line as they are written; the exit
  code becomes the pod's phase (0: ``Succeeded``, else ``Failed``, with the exit code); a pod
  that cannot start fails, its log saying why;
- the pod's IP is ``127.0.0.1`` (as for a pod on the host's network); a Ray pod is ready once
  Ray says so, any other pod as soon as it runs;
- deleting the pod (or its owner) ends its supervisor, which ends every process the pod
  started, and removes its folder and cgroups.

`cannot_run` says which pods stay simulated, because their program cannot run here: a
container without a command (it would run its image's entrypoint) and a pod that asks for a
GPU. The operators then run those as they run every pod without local execution, saying so.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import ApiError, quantity
from flarekit_testing.local._limits import Limits, limits_for
from flarekit_testing.local._pod_setup import LocalRunError, PodSetup
from flarekit_testing.local._ray import LocalRay
from flarekit_testing.local._tools import Tools

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

__all__ = ["LocalKubelet", "LocalRunError"]

JSON = dict[str, Any]
PodKey = tuple[str, str]
RAY_NODE_TYPE = "ray.io/node-type"
#: Starts the lines the kubelet itself writes into a pod's log (the rest is the program's).
KUBELET_MARK = "[flarekit local kubelet]"


@dataclass
class _Running:
    process: subprocess.Popen[bytes]
    limits: Limits


def _gpus(pod: Mapping[str, Any]) -> str | None:
    """The GPU a pod asks for (``nvidia.com/gpu: 1``), if any."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        for section in ("limits", "requests"):
            for name, value in (resources.get(section) or {}).items():
                if "gpu" in str(name).lower() and quantity.parse(value) > 0:
                    return f"{name}: {value}"
    return None


def _limits_of(container: Mapping[str, Any]) -> tuple[Fraction | None, int | None]:
    """CPU cores and memory bytes a container may use: its limits, else its requests."""
    resources = container.get("resources") or {}
    wanted = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
    cpu = quantity.parse(wanted["cpu"]) if wanted.get("cpu") not in (None, 0, "0") else None
    memory = wanted.get("memory")
    return cpu, (int(quantity.parse(memory)) if memory not in (None, 0, "0") else None)


class LocalKubelet:
    """Runs pods as local processes (see the module notes); shared by the simulated operators
    of one practice cluster, so that its pods can reach each other."""

    def __init__(self, root: str | os.PathLike[str] | None = None, *, grace: float = 5.0) -> None:
        self._root = Path(root) if root is not None else None
        self._made_root: Path | None = None
        self._processes: dict[PodKey, _Running] = {}
        self._ports: dict[Any, int] = {}
        self._lock = threading.Lock()
        self.grace = grace
        self.ray = LocalRay()
        self._tools: Tools | None = None

    def _base(self) -> Path:
        if self._root is not None:
            return self._root
        if self._made_root is None:
            self._made_root = Path(tempfile.mkdtemp(prefix="flarekit-local-pods-"))
        return self._made_root

    @property
    def tools(self) -> Tools:
        if self._tools is None:
            self._tools = Tools(self._base() / ".tools")
        return self._tools

    # -- which pods run here --------------------------------------------------------------------

    def cannot_run(self, pod: Mapping[str, Any]) -> str | None:
        """Why the pod's program cannot run on this machine (None when it can)."""
        gpu = _gpus(pod)
        if gpu is not None:
            return f"it asks for a GPU ({gpu}), which local pods do not have"
        if (pod["metadata"].get("labels") or {}).get(RAY_NODE_TYPE):
            return self.tools.ray_missing()  # KubeRay's pods run `ray start`, whatever image
        container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
        if not container.get("command"):
            return (
                f"container {container.get('name')!r} has no command: it would run the "
                f"entrypoint of image {container.get('image')!r}, which is not on this machine"
            )
        return None

    # -- running --------------------------------------------------------------------------------

    def run(self, cluster: FakeCluster, pod: JSON) -> None:
        """Start a started pod's program as a process; its end ends the pod."""
        meta = pod["metadata"]
        key = (str(meta["namespace"]), str(meta["name"]))
        with self._lock:
            if key in self._processes:
                return
        container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
        name = str(container.get("name") or "main")
        root = self._base() / key[0] / key[1]
        root.mkdir(parents=True, exist_ok=True)
        setup = PodSetup(cluster, pod, root, self.ray, self._ports)
        ready: Callable[[], bool] | None = None
        try:
            workdir = setup.mount_volumes()
            raycluster = self._raycluster(cluster, pod)
            if raycluster is not None:
                env = setup.environment(self.ray.node_env(raycluster))
                argv = setup.argv(env, self.ray.node_argv(raycluster, pod))
                cluster_name = str(raycluster["metadata"]["name"])
                ready = lambda: self.ray.ready(key[0], cluster_name, pod)  # noqa: E731
            else:
                env = setup.environment()
                argv = setup.argv(env)
                if os.path.basename(argv[0]) == os.path.basename(sys.executable) and argv[1:3] == [
                    "-m",
                    "torch.distributed.run",
                ]:
                    missing = self.tools.torch_missing()
                    if missing:
                        raise LocalRunError(f"torchrun cannot run: {missing}")
            env = self.tools.environment(env)
        except LocalRunError as exc:
            cluster.append_log(*key, f"{KUBELET_MARK} cannot run this pod: {exc}\n", name)
            cluster.finish_pod(*key, "Failed", 128)
            return
        limits = limits_for(key[1], *_limits_of(container))
        shim = [sys.executable, "-m", "flarekit_testing.local._shim", "--grace", str(self.grace)]
        for folder in limits.folders:
            shim += ["--cgroup", str(folder)]
        process = subprocess.Popen(  # the pod's own command, run on purpose
            [*shim, "--", *argv],
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        with self._lock:
            self._processes[key] = _Running(process, limits)
        self._running_status(cluster, key, ready=ready is None)
        if limits.note:
            self._event(cluster, pod, "LimitsNotEnforced", limits.note)
        threading.Thread(
            target=self._pump, args=(cluster, key, name, process), daemon=True,
            name=f"local-pod-{key[1]}",
        ).start()  # fmt: skip
        if ready is not None:
            threading.Thread(
                target=self._probe, args=(cluster, key, process, ready), daemon=True,
                name=f"local-probe-{key[1]}",
            ).start()  # fmt: skip

    @staticmethod
    def _raycluster(cluster: FakeCluster, pod: JSON) -> JSON | None:
        """The RayCluster of a KubeRay pod (None for other pods)."""
        labels = pod["metadata"].get("labels") or {}
        if not labels.get(RAY_NODE_TYPE) or not labels.get("ray.io/cluster"):
            return None
        return cluster.get(
            "rayclusters.ray.io", labels["ray.io/cluster"], pod["metadata"]["namespace"]
        )

    def _running_status(self, cluster: FakeCluster, key: PodKey, ready: bool) -> None:
        """The pod runs on this machine: its IP is the host's; ready or not yet."""
        pod = cluster.get("pods", key[1], key[0])
        if pod is None:
            return
        status = dict(pod.get("status") or {})
        status.update(podIP="127.0.0.1", podIPs=[{"ip": "127.0.0.1"}], hostIP="127.0.0.1")
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        conditions = []
        for condition in status.get("conditions") or []:
            if condition.get("type") in ("Ready", "ContainersReady"):
                value = "True" if ready else "False"
                if condition.get("status") != value:
                    condition = {**condition, "status": value, "lastTransitionTime": now}
                if not ready:
                    condition["reason"] = "ContainersNotReady"
                else:
                    condition.pop("reason", None)
            conditions.append(condition)
        status["conditions"] = conditions
        status["containerStatuses"] = [
            {**c, "ready": ready} for c in status.get("containerStatuses") or []
        ]
        with contextlib.suppress(ValueError, ApiError):
            cluster.set_status("pods", key[1], status, key[0])

    def _probe(
        self,
        cluster: FakeCluster,
        key: PodKey,
        process: subprocess.Popen[bytes],
        ready: Callable[[], bool],
    ) -> None:
        """The readiness probe: poll until the pod is ready (or gone), then report it."""
        while process.poll() is None:
            with self._lock:
                if key not in self._processes:
                    return
            if ready():
                self._running_status(cluster, key, ready=True)
                return
            time.sleep(0.5)

    def _pump(
        self, cluster: FakeCluster, key: PodKey, container: str, process: subprocess.Popen[bytes]
    ) -> None:
        """Copy the process's output into the pod's log, then end the pod with its code."""
        assert process.stdout is not None
        for raw in iter(process.stdout.readline, b""):
            try:
                cluster.append_log(*key, raw.decode("utf-8", "replace"), container)
            except ValueError:
                break  # the pod is gone
        code = process.wait()
        with self._lock:
            running = self._processes.pop(key, None)
        if running is None:
            return  # killed: kill() cleans up
        running.limits.remove()
        try:
            cluster.finish_pod(*key, "Succeeded" if code == 0 else "Failed", code)
        except ValueError:
            return  # deleted meanwhile

    def _event(self, cluster: FakeCluster, pod: JSON, reason: str, message: str) -> None:
        meta = pod["metadata"]
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        with contextlib.suppress(ApiError, ValueError):
            cluster.create(
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {
                        "name": f"{meta['name']}.{secrets.token_hex(8)}",
                        "namespace": meta["namespace"],
                    },
                    "involvedObject": {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": meta["name"],
                        "namespace": meta["namespace"],
                        "uid": meta.get("uid"),
                    },
                    "reason": reason,
                    "message": message,
                    "type": "Warning",
                    "source": {"component": "kubelet"},
                    "firstTimestamp": now,
                    "lastTimestamp": now,
                    "count": 1,
                }
            )

    # -- ending ---------------------------------------------------------------------------------

    def kill(self, namespace: str, name: str) -> None:
        """End the pod's processes (the pod was deleted): its supervisor ends every process
        the pod started; its folder and cgroups go too."""
        with self._lock:
            running = self._processes.pop((namespace, name), None)
        if running is not None:
            process = running.process
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=self.grace + 10)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            running.limits.remove()
        if self._root is None and self._made_root is not None:
            shutil.rmtree(self._made_root / namespace / name, ignore_errors=True)

    def reap(self, cluster: FakeCluster) -> None:
        """End the processes of pods that are gone (deleted by whoever: their operator, the
        garbage collector, a user), as a kubelet does when it sees the deletion."""
        for namespace, name in list(self.pids()):
            if cluster.get("pods", name, namespace) is None:
                self.kill(namespace, name)

    def forget_cluster(self, namespace: str, name: str) -> None:
        """A RayCluster is gone: its local folder goes too."""
        self.ray.forget(namespace, name)

    def running(self) -> list[PodKey]:
        with self._lock:
            return sorted(k for k, r in self._processes.items() if r.process.poll() is None)

    def pids(self) -> dict[PodKey, int]:
        """The supervisor process of each running pod."""
        with self._lock:
            return {k: r.process.pid for k, r in self._processes.items()}

    def close(self) -> None:
        """Kill every process still running and remove the folders made here."""
        for key in list(self._processes):
            self.kill(*key)
        self.ray.close()
        if self._made_root is not None:
            shutil.rmtree(self._made_root, ignore_errors=True)
            self._made_root = None
        self._tools = None
