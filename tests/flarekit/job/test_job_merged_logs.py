"""One log stream for every node of a job: `logs(follow=True, all_nodes=True)`, on FakeCluster
and on the real control plane with the same code. Neither runs Kubeflow Trainer or JobSet
here, so the test plays their part: it makes the job's two node pods, labelled as JobSet
labels them, replaces a failed pod, and marks the TrainJob Complete as Trainer would. On
FakeCluster it writes the pods' logs line by line (`append_log`); on the real control plane
KWOK serves every container's log (the note that the pod is simulated) and writing more is
refused, so there each pod's stream must be its log as the API server serves it. A second test runs the same
stream against FakeCluster's simulated Trainer, which makes and runs the pods itself."""

from __future__ import annotations

import contextlib
import threading
import uuid
import warnings
from typing import Any

from trainjob_support import TICK, torch_runtime

from flarekit._products import JOBSET_LABEL, REPLICATED_JOB_LABEL
from flarekit.job import TrainJob
from flarekit.kueue import QueueOptOutWarning
from flarekit_models.trainer.v1alpha1 import TrainJob as TrainJobModel
from flarekit_testing import (
    ClusterBackend,
    FakeCluster,
    NotSupportedByRealServer,
    TrainJobController,
)
from kube_support import client_for, new_namespace


def _node_pod(job: str, index: int) -> dict[str, Any]:
    return {
        "labels": {
            JOBSET_LABEL: job,
            REPLICATED_JOB_LABEL: "node",
            "batch.kubernetes.io/job-completion-index": str(index),
        },
        "containers": ["node"],
    }


def _per_node(lines: list[str]) -> dict[str, list[str]]:
    nodes: dict[str, list[str]] = {}
    for line in lines:
        prefix, _, text = line.partition(" ")
        nodes.setdefault(prefix, []).append(text)
    return nodes


def _write(backend: ClusterBackend, namespace: str, pod: str, text: str) -> None:
    with contextlib.suppress(NotSupportedByRealServer):  # KWOK's note is the pod's whole log
        backend.append_log(namespace, pod, text)


def test_a_two_node_jobs_merged_stream(backend: ClusterBackend) -> None:
    namespace = new_namespace(backend, "logs-")
    runtime = f"torch-{uuid.uuid4().hex[:8]}"
    backend.create({**torch_runtime(runtime), "metadata": {"name": runtime}})
    client = client_for(backend, namespace=namespace)
    job = TrainJob("merged", runtime=runtime, image="example.com/t:1", num_nodes=2,
                   no_queue=True, client=client)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", QueueOptOutWarning)
        job.submit()
    first, second, retry = "merged-node-0-0-a", "merged-node-0-1-a", "merged-node-0-1-b"
    for index, pod in ((0, first), (1, second)):
        backend.add_pod(namespace, pod, **_node_pod("merged", index))
        backend.start_pod(namespace, pod)
        _write(backend, namespace, pod, f"node {index} step 1\n")

    stream = job.logs(follow=True, all_nodes=True)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(stream), daemon=True)
    reader.start()
    _write(backend, namespace, first, "node 0 step 2\n")
    _write(backend, namespace, second, "node 1 failing\n")
    backend.finish_pod(namespace, second, phase="Failed", exit_code=1)
    # node 1 is made again, as JobSet recreates a failed job's pods: a new pod, its own lines
    backend.add_pod(namespace, retry, **_node_pod("merged", 1))
    backend.start_pod(namespace, retry)
    _write(backend, namespace, retry, "node 1 step 1 again\nnode 1 step 2\n")
    _write(backend, namespace, first, "node 0 step 3\n")
    backend.finish_pod(namespace, first)
    backend.finish_pod(namespace, retry)
    reader.join(timeout=5)
    assert reader.is_alive(), "the stream ended before the job did"
    now = "2026-01-01T00:00:00Z"
    complete = {"type": "Complete", "status": "True", "reason": "JobsCompleted",
                "message": "done", "lastTransitionTime": now}  # fmt: skip
    client.patch_status(TrainJobModel, "merged", {"status": {"conditions": [complete]}},
                        patch_type="merge")  # fmt: skip
    reader.join(timeout=60)
    assert not reader.is_alive(), "the stream did not end with the job"

    streamed = _per_node(seen)
    # each pod's lines in its stream are its log, in order, under its rank and name
    logs = {f"[{rank}/{pod}]": client_logs(client, namespace, pod)
            for rank, pod in (("0", first), ("1", second), ("1", retry))}  # fmt: skip
    assert streamed == logs
    # without follow: every pod's log, pod after pod, with the same prefixes
    assert _per_node(job.logs(all_nodes=True).splitlines()) == logs
    if isinstance(backend, FakeCluster):
        assert logs == {
            f"[0/{first}]": ["node 0 step 1", "node 0 step 2", "node 0 step 3"],
            f"[1/{second}]": ["node 1 step 1", "node 1 failing"],
            f"[1/{retry}]": ["node 1 step 1 again", "node 1 step 2"],
        }


def client_logs(client: Any, namespace: str, pod: str) -> list[str]:
    from flarekit.client._pods import read_logs

    return str(read_logs(client, namespace, pod, container="node")).splitlines()


def _lines(job: dict[str, Any], pod: dict[str, Any]) -> list[str]:
    index = pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]
    return [f"rank {index} epoch {epoch}" for epoch in (1, 2, 3)]


def test_the_merged_stream_of_a_simulated_trainjob_ends_with_it() -> None:
    with FakeCluster(
        releases={"trainer": "v2.3.0", "jobset": "v0.12.0"},
        tick_interval=TICK,
        controllers=[TrainJobController(1.0, logs=_lines)],
    ) as fc:
        fc.create(torch_runtime())
        job = TrainJob("sim", image="example.com/t:1", num_nodes=2, client=client_for(fc))
        job.submit()
        lines = list(job.logs(follow=True, all_nodes=True))
        assert job.status().finished
        nodes = _per_node(lines)
        assert len(nodes) == 2
        for prefix, texts in nodes.items():
            rank = prefix[1]
            assert prefix.startswith(f"[{rank}/sim-node-")
            assert texts == [f"rank {rank} epoch {epoch}" for epoch in (1, 2, 3)]
        assert {prefix[1] for prefix in nodes} == {"0", "1"}
