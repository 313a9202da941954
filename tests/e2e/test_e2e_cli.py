"""``flarekit job stop`` on both backends: for a running queued TrainJob and RayJob it prints
the state the job is stopped in (Suspended), once the operators have stopped it, and the job
stays so; never the Running it was in when asked, nor a Succeeded it never reached."""

from __future__ import annotations

import io
import time

from e2e_support import RUNTIME, Backend, small_cluster

from flarekit import Client
from flarekit.cli import main
from flarekit.job import JobState, RayJob, TrainJob
from flarekit_testing.controlplane._kwok import DURATION_ENV


def _flarekit(backend: Backend, namespace: str, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    kube = ["--kubeconfig", str(backend.cluster.kubeconfig_path), "-n", namespace]
    code = main([*argv, *kube], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _state_line(text: str) -> str:
    """The state `job stop` printed: the ``state`` row of a RayJob's table, or the state
    after the colon of a TrainJob's one-line status."""
    for line in text.splitlines():
        if line.startswith("state "):
            return line.split()[1]
    head = text.splitlines()[0]
    return head.split(": ", 1)[1].split(" ", 1)[0]


def _stays_suspended(job: RayJob | TrainJob, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = job.status().state
        assert state is JobState.SUSPENDED, f"the stopped job became {state.value}"
        time.sleep(0.5)


def test_job_stop_prints_the_stopped_state_of_a_queued_trainjob(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = TrainJob(
        "stoppable",
        namespace=namespace,
        runtime=RUNTIME,
        image="pytorch/pytorch:2.7.1",
        command=["python", "train.py"],
        num_nodes=2,
        resources_per_node={"cpu": 1, "memory": "2Gi"},
        env={DURATION_ENV: "600s"},
        local_queue=lq,
        client=client,
    ).submit()
    backend.wait(lambda: job.status().state is JobState.RUNNING, "the job runs")
    code, out, err = _flarekit(backend, namespace, "job", "stop", "stoppable")
    assert code == 0, err
    assert _state_line(out) == "Suspended", out
    _stays_suspended(job, 5)
    job.delete()


def test_job_stop_prints_the_stopped_state_of_a_queued_rayjob(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    job = RayJob(
        "stoppable",
        "python long.py",
        namespace=namespace,
        cluster_config=small_cluster("unused", namespace, lq),
        runtime_env={"env_vars": {"FLAREKIT_SIMULATED_DURATION": "600s"}},
        client=client,
    ).submit()
    backend.wait(lambda: job.status().deployment_status == "Running", "the job runs")
    code, out, err = _flarekit(backend, namespace, "job", "stop", "stoppable")
    assert code == 0, err
    assert _state_line(out) == "Suspended", out
    assert job.status().deployment_status == "Suspended"
    _stays_suspended(job, 5)
    job.delete()
