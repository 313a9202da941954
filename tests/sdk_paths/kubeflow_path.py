"""The Kubeflow SDK's trainer path against FakeCluster with the simulated Trainer.

Run in the separate SDK environment (`make sdk-paths`): kubeflow 0.5.0's `TrainerClient`
with only a kubeconfig. The `torch-distributed` ClusterTrainingRuntime is Trainer's own
(read from the upstream samples beside the repository). Each step prints `ok` or the error
it raised; the exit code is the number of failed steps.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from flarekit_testing import FakeCluster, TrainJobController

RUNTIME = (
    "samples/trainer.kubeflow.org/v1alpha1/ClusterTrainingRuntime/"
    "trainer--manifests-base-runtimes-torch-distributed-yaml--0.yaml"
)


def train() -> None:
    print("training")


def main(shared: Path) -> int:
    home = tempfile.mkdtemp(prefix="sdk-home-")
    runtime = yaml.safe_load((shared / RUNTIME).read_text())
    logs = TrainJobController(run_for=2, logs=lambda job, pod: ["epoch 1", "epoch 2", "done"])
    with FakeCluster(tick_interval=0.1, controllers=[logs]) as fc:
        fc.create(runtime)
        os.environ.update(HOME=home, KUBECONFIG=str(fc.kubeconfig_path))
        from kubeflow.trainer import CustomTrainer, TrainerClient

        state: dict[str, Any] = {}
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("TrainerClient()", lambda: state.setdefault("client", TrainerClient())),
            ("list_runtimes()", lambda: [r.name for r in state["client"].list_runtimes()]),
            (
                "get_runtime('torch-distributed')",
                lambda: state.setdefault(
                    "runtime", state["client"].get_runtime("torch-distributed")
                ).name,
            ),
            (
                "train(CustomTrainer)",
                lambda: state.setdefault(
                    "job",
                    state["client"].train(
                        runtime=state["runtime"],
                        trainer=CustomTrainer(func=train, num_nodes=2),
                    ),
                ),
            ),
            ("list_jobs()", lambda: [j.name for j in state["client"].list_jobs()]),
            ("get_job()", lambda: state["client"].get_job(state["job"]).status),
            (
                "wait_for_job_status(Complete)",
                lambda: state["client"].wait_for_job_status(state["job"], timeout=60).status,
            ),
            ("get_job_logs()", lambda: list(state["client"].get_job_logs(state["job"]))),
            ("get_job_events()", lambda: len(state["client"].get_job_events(state["job"]))),
            ("delete_job()", lambda: state["client"].delete_job(state["job"])),
        ]
        failed = 0
        for name, fn in steps:
            try:
                result = fn()
            except BaseException as exc:  # report and go on: each step is a figure
                failed += 1
                print(f"FAIL {name}: {type(exc).__name__}: {exc}".splitlines()[0])
                traceback.print_exc(limit=3, file=sys.stderr)
            else:
                shown = repr(result).splitlines()[0][:100] if result is not None else ""
                print(f"ok   {name} {shown}")
        print(f"kubeflow path: {len(steps) - failed}/{len(steps)} steps ok")
        return failed


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared")))
