"""Nothing pretends: every line the simulated operators write into a pod's log says that it is
simulated, and none imitates a real program's output.

Every job kind runs through the simulated operators with their own output (no `logs=`):
Ray clusters, RayJobs that succeed and fail, TrainJobs and PyTorchJobs that
succeed and fail, and, under local execution, pods whose program cannot run here. Every line
of every pod's log is collected while the pods exist. The source is checked too: only one
place in the simulated operators writes a log (the pod runner, which marks every line the
operators give it), and no string in them imitates Ray's, torchrun's or Trainer's own output.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path
from typing import Any

from sim_support import TICK, ray_cluster, ray_job, train_job, wait_for

import flarekit_testing.operators as operators_package
from flarekit_testing import (
    FakeCluster,
    LocalKubelet,
    PyTorchJobController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from wait_support import wait_until

JSON = dict[str, Any]
MARK = "[simulated]"
FAIL = {"name": "FLAREKIT_SIMULATED_EXIT_CODE", "value": "3"}
#: What real programs print and the simulations once imitated.
IMITATIONS = ("submitted successfully", "Ray runtime started", "View the Ray dashboard",
              "Tailing logs until", "Job submission server address", "loss=")  # fmt: skip


class Collector:
    """Every line of every pod's log, read on every tick while the pods exist."""

    def __init__(self, fc: FakeCluster) -> None:
        self.fc, self.lines, self.pods = fc, {}, set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Collector:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.read()

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            self.read()

    def read(self) -> None:
        for pod in self.fc.objects("pods"):
            meta = pod["metadata"]
            key = (meta["namespace"], meta["name"])
            self.pods.add(key)
            for container in pod["spec"]["containers"]:
                try:
                    text = self.fc.read_log(*key, container["name"])
                except ValueError:
                    continue  # gone meanwhile
                self.lines[(*key, container["name"])] = text.splitlines()


def _pytorch_job(name: str, fail: bool = False) -> JSON:
    container: JSON = {"name": "pytorch", "image": "pytorch/pytorch:2.7.1", "command": ["true"]}
    if fail:
        container["env"] = [FAIL]
    template = {"spec": {"containers": [container]}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": template},
            "Worker": {"replicas": 1, "template": template},
        }},
    }  # fmt: skip


def _failing_train_job(name: str) -> JSON:
    job = train_job(name)
    job["spec"].setdefault("trainer", {})["env"] = [FAIL]
    return job


def test_every_line_the_simulated_operators_print_says_so() -> None:
    controllers = [
        RayClusterController(ready_after=0.05),
        RayJobController(run_for=0.2, wait_for_cluster=True),
        TrainJobController(run_for=0.2),
        PyTorchJobController(run_for=0.2),
    ]
    with FakeCluster(tick_interval=TICK, controllers=controllers) as fc, Collector(fc) as seen:
        fc.create(ray_cluster("rc"))
        fc.create(ray_job("ok"))
        failing = ray_job("broken")
        failing["spec"]["runtimeEnvYAML"] = "env_vars:\n  FLAREKIT_SIMULATED_EXIT_CODE: '2'\n"
        fc.create(failing)
        fc.create(train_job("tj"))
        fc.create(_failing_train_job("tj-fails"))
        fc.create(_pytorch_job("pt"))
        fc.create(_pytorch_job("pt-fails", fail=True))
        for name, field, done in (
            ("ok", "jobDeploymentStatus", ("Complete",)), ("broken", "jobDeploymentStatus", ("Failed",)),
        ):  # fmt: skip
            wait_for(
                fc, "rayjobs", name, lambda o, f=field, d=done: (o.get("status") or {}).get(f) in d
            )
        for name in ("tj", "tj-fails"):
            wait_for(fc, "trainjobs", name, lambda o: _ended(o, ("Complete", "Failed")))
        for name in ("pt", "pt-fails"):
            wait_for(fc, "pytorchjobs", name, lambda o: _ended(o, ("Succeeded", "Failed")))
        wait_for(fc, "rayclusters", "rc", lambda o: (o.get("status") or {}).get("state") == "ready")
    kinds = {name.split("-")[0] for _, name in seen.pods}
    assert {"rc", "ok", "broken", "tj", "pt"} <= kinds, seen.pods
    _check(seen.lines)


def test_pods_local_execution_cannot_run_say_they_are_simulated() -> None:
    kubelet = LocalKubelet()
    gpu = train_job("gpu")
    gpu["spec"]["trainer"] = {"image": "x:1", "command": ["python", "-c", "print(1)"],
                              "resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}}  # fmt: skip
    entry = train_job("entry")
    entry["spec"]["trainer"] = {
        "image": "x:1",
        "env": [{"name": "FLAREKIT_SIMULATED_DURATION", "value": "0.1"}],
    }
    with (
        FakeCluster(tick_interval=TICK, controllers=[TrainJobController(local=kubelet)]) as fc,
        Collector(fc) as seen,
    ):
        fc.create(gpu)
        fc.create(entry)
        wait_for(fc, "trainjobs", "entry", lambda o: _ended(o, ("Complete", "Failed")))
        wait_until(lambda: any("gpu" in k[1] and v for k, v in seen.lines.items()), "gpu's note")
    lines = [line for text in seen.lines.values() for line in text]
    assert any("asks for a GPU (nvidia.com/gpu: 1)" in line for line in lines), lines
    assert any("has no command" in line for line in lines), lines
    _check(seen.lines)


def _ended(obj: JSON, types: tuple[str, ...]) -> bool:
    return any(
        c.get("type") in types and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


def _check(lines: dict[tuple[str, str, str], list[str]]) -> None:
    assert lines, "no pod printed anything"
    unmarked = {k: [x for x in v if not x.startswith(MARK)] for k, v in lines.items()}
    assert {k: v for k, v in unmarked.items() if v} == {}
    for text in lines.values():
        for line in text:
            assert not any(imitation in line for imitation in IMITATIONS), line


def test_only_the_pod_runner_writes_logs_and_no_string_imitates_a_program() -> None:
    folder = Path(operators_package.__file__).parent
    writers = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "append_log":
                writers.append(path.name)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for imitation in IMITATIONS:
                    assert imitation not in node.value, f"{path.name}: {node.value!r}"
    # one writer: the pod runner, which marks every line the operators give it
    assert writers == ["_pods.py"]
