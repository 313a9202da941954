"""Local execution's pieces, without anything that listens beyond loopback: the supervisor
that ends every process of a pod, CPU and memory limits, what a pod's process sees (the names
of other pods and of Ray clusters made local, one rendezvous port per job), which pods stay
simulated, and a PyTorchJob whose replicas run here as plain Python processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from sim_support import TICK, wait_for

from flarekit_testing import FakeCluster, LocalKubelet, PyTorchJobController
from flarekit_testing.local._limits import limits_for
from flarekit_testing.local._pod_setup import PodSetup
from flarekit_testing.local._ray import LocalRay
from wait_support import wait_until

JSON = dict[str, Any]
SHIM = [sys.executable, "-m", "flarekit_testing.local._shim", "--grace", "1", "--"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_the_supervisor_ends_what_the_pod_left_behind_and_keeps_its_exit_code(
    tmp_path: Path,
) -> None:
    script = f"(setsid sleep 300 & echo $! > {tmp_path}/orphan); exit 7"
    done = subprocess.run([*SHIM, "bash", "-c", script], timeout=60)
    assert done.returncode == 7
    orphan = int((tmp_path / "orphan").read_text())
    wait_until(lambda: not _alive(orphan), "the orphan ends with its pod", poll=0.05)


def test_stopping_the_supervisor_ends_the_whole_pod(tmp_path: Path) -> None:
    script = f"trap '' TERM; (setsid sleep 300 & echo $! > {tmp_path}/orphan); sleep 300"
    shim = subprocess.Popen([*SHIM, "bash", "-c", script], start_new_session=True)
    wait_until(lambda: (tmp_path / "orphan").exists(), "the pod started", poll=0.05)
    orphan = int((tmp_path / "orphan").read_text().strip() or 0)
    shim.send_signal(signal.SIGTERM)
    assert shim.wait(timeout=60) != 0
    wait_until(lambda: not _alive(orphan), "every process of the pod ends", poll=0.05)


def test_memory_beyond_the_limit_is_refused_where_cgroups_can_be_made() -> None:
    limits = limits_for("memory-hog", None, 64 * 2**20)
    if not limits.folders:
        assert "not" in limits.note  # says why nothing is enforced
        pytest.skip(limits.note)
    try:
        shim = [*SHIM[:-1], *[a for f in limits.folders for a in ("--cgroup", str(f))], "--"]
        hog = "x = bytearray(512 * 2**20); x[::4096] = b'1' * len(x[::4096]); print('survived')"
        done = subprocess.run([*shim, sys.executable, "-c", hog], capture_output=True, timeout=60)
        assert done.returncode != 0 and b"survived" not in done.stdout
        fine = subprocess.run([*shim, sys.executable, "-c", "print('small')"], timeout=60)
        assert fine.returncode == 0
    finally:
        limits.remove()
    assert all(not f.exists() for f in limits.folders)


def test_cpu_limits_become_a_cfs_quota_where_cgroups_can_be_made() -> None:
    limits = limits_for("cpu", Fraction(1, 2), None)
    if not limits.folders:
        pytest.skip(limits.note)
    try:
        [folder] = limits.folders
        quota = folder / ("cpu.max" if (folder / "cpu.max").exists() else "cpu.cfs_quota_us")
        assert quota.read_text().split()[0] == "50000"
    finally:
        limits.remove()


def _pod(name: str, namespace: str = "default", **spec: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "main", "image": "x:1", **spec.pop("c", {})}], **spec},
    }


def test_a_pod_sees_the_other_pods_and_clusters_of_its_job_on_this_machine(
    tmp_path: Path,
) -> None:
    ray, ports = LocalRay(), {}
    cluster_ports = ray.ports("default", "demo")
    env = [
        {"name": "PET_MASTER_ADDR", "value": "job-node-0-0.job"},
        {"name": "PET_MASTER_PORT", "value": "29500"},
        {"name": "DASHBOARD", "value": "http://demo-head-svc.default.svc.cluster.local:8265"},
        {"name": "GCS", "value": "demo-head-svc:6379"},
        {"name": "ELSEWHERE", "value": "example.com:443"},
        {"name": "BOTH", "value": "$(PET_MASTER_ADDR):$(PET_MASTER_PORT)"},
    ]
    try:
        with FakeCluster() as fc:
            for index in range(2):
                fc.create(_pod(f"job-node-0-{index}-x", hostname=f"job-node-0-{index}",
                               subdomain="job", c={"env": env}))  # fmt: skip
            seen = []
            for index in range(2):
                pod = fc.get("pods", f"job-node-0-{index}-x") or {}
                setup = PodSetup(fc, pod, tmp_path / str(index), ray, ports)
                seen.append(setup.environment())
        first, second = seen
        assert first["PET_MASTER_ADDR"] == second["PET_MASTER_ADDR"] == "127.0.0.1"
        assert first["PET_MASTER_PORT"] == second["PET_MASTER_PORT"] != "29500"
        assert first["DASHBOARD"] == f"http://127.0.0.1:{cluster_ports.dashboard}"
        assert first["GCS"] == f"127.0.0.1:{cluster_ports.gcs}"
        assert first["ELSEWHERE"] == "example.com:443"
        # expanded from the pod's own values, then made local like the variables themselves
        assert first["BOTH"] == f"127.0.0.1:{first['PET_MASTER_PORT']}"
    finally:
        ray.close()
    assert not cluster_ports.temp_dir.exists()


def test_pods_whose_program_cannot_run_here_stay_simulated() -> None:
    kubelet = LocalKubelet()
    gpu = _pod("g", c={"command": ["python"], "resources": {"limits": {"nvidia.com/gpu": 1}}})
    assert "asks for a GPU (nvidia.com/gpu: 1)" in str(kubelet.cannot_run(gpu))
    assert "has no command" in str(kubelet.cannot_run(_pod("e")))
    assert kubelet.cannot_run(_pod("p", c={"command": ["python", "-V"]})) is None
    ray_pod = _pod("h", c={})
    ray_pod["metadata"]["labels"] = {"ray.io/node-type": "head", "ray.io/cluster": "c"}
    assert kubelet.cannot_run(ray_pod) == kubelet.tools.ray_missing()  # ray start, any image
    kubelet.close()


def _pytorch_job(name: str, code: str) -> JSON:
    template = {"spec": {"containers": [
        {"name": "pytorch", "image": "x:1", "command": ["python", "-c", code]}
    ]}}  # fmt: skip
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": template},
            "Worker": {"replicas": 1, "template": template},
        }},
    }  # fmt: skip


def test_a_pytorchjob_runs_its_replicas_here_and_ends_as_they_do() -> None:
    code = (
        "import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'], "
        "'master', os.environ['MASTER_ADDR'], os.environ['MASTER_PORT'] != '23456')"
    )
    controller = PyTorchJobController(local=True)
    with FakeCluster(tick_interval=TICK, controllers=[controller]) as fc:
        fc.create(_pytorch_job("ok", code))
        fc.create(_pytorch_job("bad", "import sys; sys.exit(5)"))
        done = wait_for(fc, "pytorchjobs", "ok", lambda o: _true(o, "Succeeded"), "default")
        assert done["status"]["replicaStatuses"]["Master"]["succeeded"] == 1
        assert fc.read_log("default", "ok-master-0") == "rank 0 of 2 master 127.0.0.1 True\n"
        assert fc.read_log("default", "ok-worker-0") == "rank 1 of 2 master 127.0.0.1 True\n"
        wait_for(fc, "pytorchjobs", "bad", lambda o: _true(o, "Failed"), "default")
        fc.delete("pytorchjobs", "ok")
        fc.delete("pytorchjobs", "bad")
        wait_until(lambda: controller.pods.local and not controller.pods.local.running(), "ends")


def _true(obj: JSON, type_: str) -> bool:
    return any(
        c.get("type") == type_ and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


def test_the_kubelet_ends_the_processes_of_deleted_pods(tmp_path: Path) -> None:
    kubelet = LocalKubelet(tmp_path)
    with FakeCluster() as fc:
        fc.create(_pod("sleeper", c={"command": ["sleep", "300"]}))
        pod = fc.start_pod("default", "sleeper")
        kubelet.run(fc, pod)
        [pid] = kubelet.pids().values()
        assert (fc.get("pods", "sleeper") or {})["status"]["podIP"] == "127.0.0.1"
        fc.delete("pods", "sleeper")
        kubelet.reap(fc)
        assert kubelet.running() == [] and not _alive(pid)
    kubelet.close()
    assert os.path.isdir(tmp_path)  # a root it was given is the caller's
