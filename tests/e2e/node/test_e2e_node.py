"""What flarekit creates, run for real: on the real node, Ray clusters start Ray, RayJobs and
dashboard jobs run Python, TrainJobs run torchrun with gloo across two pods, and what they
print comes back through flarekit. Each test checks a value its job computed from an input
chosen here at random, so that nothing but the real run can produce it."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path

from e2e_support import Backend, NodeBackend

from flarekit import Client
from flarekit.cluster import Cluster, ClusterConfiguration, ClusterState, RayClientUnavailable
from flarekit.job import DistributedJob, JobState, RayJob, TrainJob
from kube_support import QUEUE_LABEL

#: Small enough for a node of two CPUs: a head, a worker and a job's pods at once.
HEAD = {"head_cpu_requests": "500m", "head_cpu_limits": 1}
HEAD_MEMORY = {"head_memory_requests": 2, "head_memory_limits": 2}
WORKER = {"worker_cpu_requests": "250m", "worker_cpu_limits": 1}
WORKER_MEMORY = {"worker_memory_requests": 1, "worker_memory_limits": 2}
TRAIN_RESOURCES = {"cpu": "250m", "memory": "1Gi"}


def _cluster(name: str, namespace: str, lq: str, **options: object) -> ClusterConfiguration:
    return ClusterConfiguration(
        name,
        namespace=namespace,
        num_workers=1,
        local_queue=lq,
        **HEAD,
        **HEAD_MEMORY,
        **WORKER,
        **WORKER_MEMORY,
        **options,  # type: ignore[arg-type]
    )


def _node_containers(backend: Backend, namespace: str) -> list[str]:
    """The containers containerd holds on the node for pods of `namespace`."""
    assert isinstance(backend, NodeBackend)
    node = backend.cluster.node
    assert node is not None
    selector = f'labels."io.kubernetes.pod.namespace"=={namespace}'
    return node.ctr("containers", "list", "--quiet", selector).split()


def test_queued_cluster_runs_ray_and_jobs_print_what_they_computed(
    backend: Backend, namespace: str, client: Client, lq: str, tmp_path: Path
) -> None:
    cluster = Cluster(_cluster("ray", namespace, lq), client)
    cluster.apply()
    status = cluster.wait_ready(**backend.waits)  # the dashboard answers, through the API server
    assert status.state is ClusterState.READY
    assert cluster.is_dashboard_ready()
    [workload] = backend.owned_by("workloads", namespace, "ray")
    assert any(
        c["type"] == "Admitted" and c["status"] == "True" for c in workload["status"]["conditions"]
    )

    # A RayJob on it: KubeRay's submitter pod runs `ray job submit` against the head.
    number = random.randint(10_000, 99_999)
    entrypoint = (
        'python -c "import ray; ray.init(); '
        f"print('triple', 3 * {number}); print('nodes', len(ray.nodes()))\""
    )
    job = RayJob("count", entrypoint, namespace=namespace, cluster_name="ray", client=client)
    job.submit()
    done = job.wait(**backend.waits)
    assert done.succeeded and done.job_status == "SUCCEEDED"
    logs = job.logs()
    assert f"triple {3 * number}" in logs
    assert "nodes 2" in logs

    # The dashboard's Jobs API through the API server, with a local working_dir.
    (tmp_path / "main.py").write_text("import sys\nprint('squared', int(sys.argv[1]) ** 2)\n")
    dashboard = cluster.dashboard_client()
    submission = dashboard.submit(
        f"python main.py {number}", runtime_env={"working_dir": str(tmp_path)}
    )
    finished = dashboard.wait(submission, timeout=backend.timeout)
    assert finished.status.value == "SUCCEEDED", dashboard.logs(submission)
    assert f"squared {number ** 2}" in dashboard.logs(submission)
    assert job.delete(wait=True, timeout=backend.timeout)  # and its submitter pod
    cluster.down(wait=True, **backend.waits)
    backend.wait(lambda: not backend.objects("pods", namespace), "no pod left")
    backend.wait(lambda: not _node_containers(backend, namespace), "no container left on the node")


def all_reduce(offset: int) -> None:
    """Each rank contributes rank + offset; every rank prints the sum all_reduce gave it. The
    first run (no marker in /shared, a folder of the node both pods mount) then lingers, to
    be stopped while it runs; the run after `resume()` ends at once."""
    import os
    import time

    import torch
    import torch.distributed as dist

    first_run = not os.path.exists("/shared/ran")
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    value = torch.tensor([float(rank + offset)])
    dist.all_reduce(value)
    print(f"rank {rank} of {world}: sum {int(value.item())}", flush=True)
    dist.destroy_process_group()
    if first_run:
        open("/shared/ran", "w").close()
        time.sleep(900)


def test_trainjob_all_reduces_across_two_pods_and_is_stopped_and_resumed(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    assert isinstance(backend, NodeBackend)
    shared = backend.cluster.directory / "node" / f"shared-{namespace}"
    shared.mkdir()
    offset = random.randint(100, 999)
    expected = offset + (offset + 1)
    job = TrainJob(
        "reduce",
        namespace=namespace,
        runtime="torch-distributed",
        func=all_reduce,
        func_args={"offset": offset},
        num_nodes=2,
        num_proc_per_node=1,
        resources_per_node=TRAIN_RESOURCES,
        volumes=[{"name": "shared", "hostPath": {"path": str(shared), "type": "Directory"}}],
        volume_mounts=[{"name": "shared", "mountPath": "/shared"}],
        local_queue=lq,
        client=client,
    ).submit()

    def reduced() -> bool:
        try:
            return all(f"sum {expected}" in job.logs(node=rank) for rank in (0, 1))
        except Exception:  # no pod or no log yet
            return False

    backend.wait(reduced, "both ranks print the sum")
    for rank in (0, 1):  # each node's pod ran one rank
        assert f"rank {rank} of 2: sum {expected}" in job.logs(node=rank)
    assert job.status().state is JobState.RUNNING

    # Stopped through its Kueue Workload: its pods go, on the node too; resumed, it runs again.
    job.stop()
    backend.wait(lambda: job.status().state is JobState.SUSPENDED, "Kueue suspends it")
    backend.wait(lambda: not backend.objects("pods", namespace), "its pods are removed")
    backend.wait(lambda: not _node_containers(backend, namespace), "no container on the node")
    job.resume()
    assert job.wait(**backend.waits).state is JobState.SUCCEEDED
    for rank in (0, 1):
        assert f"rank {rank} of 2: sum {expected}" in job.logs(node=rank)


def test_distributed_job_runs_its_script_with_torchrun(
    backend: Backend, namespace: str, client: Client, lq: str, tmp_path: Path
) -> None:
    number = random.randint(1000, 9999)
    (tmp_path / "train.py").write_text(
        "import os, sys\n"
        "rank = os.environ['RANK']\n"
        "print(f'rank {rank} got', int(sys.argv[1]) + 1, flush=True)\n"
    )
    job = DistributedJob(
        "dist",
        script="train.py",
        args=[str(number)],
        files=[tmp_path / "train.py"],  # written into the pods before torchrun starts
        j="2x1",
        cpu="250m",
        mem_mb=1024,
        local_queue=lq,
        namespace=namespace,
        client=client,
    ).submit()
    assert isinstance(job, TrainJob)
    assert job.wait(**backend.waits).state is JobState.SUCCEEDED
    assert f"rank 0 got {number + 1}" in job.logs(node=0)
    assert f"rank 1 got {number + 1}" in job.logs(node=1)


def test_cluster_in_an_appwrapper_runs_ray_and_down_leaves_nothing_on_the_node(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    cluster = Cluster(_cluster("wrapped", namespace, lq, appwrapper=True), client)
    cluster.apply()
    status = cluster.wait_ready(**backend.waits)
    assert status.state is ClusterState.READY
    [wrapper] = backend.objects("appwrappers", namespace)
    assert wrapper["metadata"]["labels"][QUEUE_LABEL] == lq
    assert wrapper["status"]["phase"] == "Running"
    assert cluster.dashboard_client().version().ray_version
    assert _node_containers(backend, namespace)
    cluster.down(wait=True, **backend.waits)
    backend.wait(lambda: not backend.objects("pods", namespace), "no pod left")
    started = time.monotonic()
    backend.wait(lambda: not _node_containers(backend, namespace), "no container on the node")
    assert time.monotonic() - started < backend.timeout


RAY_CLIENT = """
import sys, ray
ray.init(sys.argv[1])
@ray.remote
def triple(x):
    return 3 * x
print("triple", ray.get(triple.remote(int(sys.argv[2]))))
print("nodes", len([n for n in ray.nodes() if n["Alive"]]))
ray.shutdown()
"""


def test_ray_client_through_a_port_forward_to_the_head(
    backend: Backend, namespace: str, client: Client, lq: str
) -> None:
    """Nothing exposes the head: `local_client_url()` forwards a local port to the head
    pod's client port through the API server, and a Ray client runs a task through it."""
    venv = Path(
        subprocess.run(
            [sys.executable, str(Path(__file__).parent / "ray_client_venv.py")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    cluster = Cluster(_cluster("fwd", namespace, lq), client)
    cluster.apply()

    # What the forward needs is a running head pod (wait_ready, which also waits for the
    # head's readiness probe, is the first test's): until then, the error says so.
    def head_runs() -> bool:
        try:
            cluster.local_client_url()
        except RayClientUnavailable:
            return False
        return True

    backend.wait(head_runs, "the head pod runs")
    cluster.close()
    with cluster:
        started = time.monotonic()
        url = cluster.local_client_url()
        setup = time.monotonic() - started
        assert url.startswith("ray://127.0.0.1:")
        assert cluster.local_client_url() == url  # the same forward, reused
        number = random.randint(10_000, 99_999)
        for _attempt in range(10):  # Ray's client server starts a little after the pod
            run = subprocess.run(
                [str(venv / "bin" / "python"), "-c", RAY_CLIENT, url, str(number)],
                capture_output=True,
                text=True,
                timeout=300,
            )
            if run.returncode == 0 and "nodes 2" in run.stdout:
                break
            time.sleep(10)
        assert run.returncode == 0, run.stderr[-3000:]
        assert f"triple {3 * number}" in run.stdout
        assert "nodes 2" in run.stdout  # the head and its worker
        print(f"local_client_url() with its port-forward: {setup * 1000:.0f} ms")
    assert [t for t in threading.enumerate() if t.name.startswith("flarekit-port-forward")] == []

    # The scoped form: the forward ends with the block.
    with cluster.local_client() as scoped:
        assert scoped.startswith("ray://127.0.0.1:")
    assert [t for t in threading.enumerate() if t.name.startswith("flarekit-port-forward")] == []
    cluster.down(wait=True, **backend.waits)
