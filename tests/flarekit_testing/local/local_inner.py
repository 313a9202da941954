"""The practice cluster with local execution, as a user meets it: through the KUBECONFIG that
``flarekit dev up`` prints, and through ``python -m flarekit.walkthrough``.

Run by test_local_execution.py inside a network and PID namespace of its own (Ray and
torch.distributed bind beyond loopback; see tests/netns_support.py), with
``FLAREKIT_TORCH_VENV`` naming the cached PyTorch. Every value the jobs print is derived from
an input chosen at random here, so that only a real run can print it; every process a job or
cluster started is looked up by PID before it is stopped, and must be gone after.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarekit import Client, Cluster, ClusterConfiguration, from_kubeconfig
from flarekit.job import JobState, RayJob, TrainJob
from flarekit.ray import RayJobClient, RayJobState

WAIT = {"timeout": 600, "poll": 0.5, "progress": False}
pytestmark = pytest.mark.timeout(900)


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if fields and fields[0] != "Z":
            out.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return out


def descendants(pid: int) -> set[int]:
    children, found, queue = _children(), set(), [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            if child not in found:
                found.add(child)
                queue.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    still = set()
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat")
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            still.add(pid)
    return still


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_gone(pids: set[int], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = alive(pids)
    assert not left, f"{what}: still running: {[(p, cmdline(p)[:120]) for p in left]}"


def _dev(directory: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    env["FLAREKIT_DEV_DIR"] = str(directory)
    return subprocess.run(
        [sys.executable, "-m", "flarekit.cli", "dev", *argv],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, int]]:
    """``eval "$(flarekit dev up)"``: a client of the KUBECONFIG it prints, and the server's
    pid; at the end ``flarekit dev down`` must leave none of its processes."""
    directory = tmp_path_factory.mktemp("dev")
    up = _dev(directory, "up")
    assert up.returncode == 0, up.stderr
    kubeconfig = re.fullmatch(r"export KUBECONFIG=(.+)\n", up.stdout)
    assert kubeconfig is not None, up.stdout
    pid = int((directory / "pid").read_text())
    try:
        yield Client(from_kubeconfig(kubeconfig.group(1))), pid
    finally:
        before = descendants(pid) | {pid}
        down = _dev(directory, "down")
        assert down.returncode == 0 and down.stdout == "practice cluster stopped\n", down
        wait_gone(before, "flarekit dev down", timeout=30)


def all_reduce(value: int) -> None:
    """Every rank adds value * (rank + 1); each prints the sum all_reduce gives it."""
    import os
    import warnings

    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    import torch  # type: ignore[import-not-found]
    import torch.distributed as dist  # type: ignore[import-not-found]

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    tensor = torch.tensor([float(value * (rank + 1))])
    dist.all_reduce(tensor)
    print(f"rank {rank} of {dist.get_world_size()} (pod {os.environ['HOSTNAME']}): "
          f"all_reduce = {int(tensor.item())}", flush=True)  # fmt: skip
    dist.destroy_process_group()


def test_a_two_node_trainjob_all_reduces_for_real(dev: tuple[Client, int]) -> None:
    client, _ = dev
    value = random.randint(1000, 9999)
    job = TrainJob(
        "reduce", func=all_reduce, func_args={"value": value}, num_nodes=2,
        resources_per_node={"cpu": 1, "memory": "2Gi"}, client=client,
    ).submit()  # fmt: skip
    assert job.wait(**WAIT).state is JobState.SUCCEEDED, job.logs()
    expected = 3 * value
    assert "rank 0 of 2 (pod reduce-node-0-0-" in job.logs()
    assert f"all_reduce = {expected}" in job.logs()
    assert "rank 1 of 2 (pod reduce-node-0-1-" in job.logs(node=1)
    assert f"all_reduce = {expected}" in job.logs(node=1)
    job.delete(wait=True, timeout=120)


def sleeper() -> None:
    import os
    import subprocess
    import time

    helper = subprocess.Popen(["sleep", "600"])  # a process of its own, which must end too
    print(f"pid {os.getpid()} helper {helper.pid}", flush=True)
    time.sleep(600)


def test_stopping_a_running_trainjob_ends_its_processes(dev: tuple[Client, int]) -> None:
    client, server = dev
    job = TrainJob("sleeper", runtime="torch-distributed", func=sleeper, client=client).submit()
    deadline = time.monotonic() + 300
    found = None
    while found is None and time.monotonic() < deadline:
        text = str(job.logs()) if job.pods() else ""
        found = re.search(r"pid (\d+) helper (\d+)", text)
        time.sleep(0.5)
    assert found is not None, job.logs()
    pids = {int(found.group(1)), int(found.group(2))}
    assert alive(pids) == pids
    started = {p for p in descendants(server) if "sleep" in cmdline(p) or "sleeper" in cmdline(p)}
    assert job.stop().state in (JobState.STOPPED, JobState.SUSPENDED)
    wait_gone(pids | started, "the stopped TrainJob's processes")
    job.delete(wait=True, timeout=120)


RAY_ENTRYPOINT = (
    'python -c "import ray; ray.init(); square = ray.remote(lambda x: x * x); '
    "print('squared', ray.get(square.remote({value}))); "
    "print('resources', ray.cluster_resources())\""
)


def test_a_ray_cluster_runs_ray_jobs_and_goes_without_a_trace(
    dev: tuple[Client, int], tmp_path: Path
) -> None:
    client, server = dev
    config = ClusterConfiguration(
        name="demo", namespace="team-a", num_workers=1, head_cpu_requests=1, head_cpu_limits=1,
        head_memory_requests=2, head_memory_limits=2, worker_cpu_requests=1,
        worker_cpu_limits=1, worker_memory_requests=2, worker_memory_limits=2,
    )  # fmt: skip
    cluster = Cluster(config, client)
    cluster.apply()
    cluster.wait_ready(timeout=600, poll=0.5)
    ray = {p for p in descendants(server) if "ray" in cmdline(p)}
    assert ray, "no Ray process runs for the cluster"

    value = random.randint(1000, 9999)
    job = RayJob(
        "squares", RAY_ENTRYPOINT.format(value=value), namespace="team-a",
        cluster_name="demo", client=client,
    ).submit()  # fmt: skip
    assert job.wait(**WAIT).state is JobState.SUCCEEDED, job.logs()
    logs = str(job.logs())
    assert f"squared {value * value}" in logs
    assert "'CPU': 2.0" in logs, logs  # the head's and the worker's CPU, as Ray reports them

    # Ray's own job API at the dashboard address the cluster reports, with a local folder.
    dashboard = cluster.cluster_dashboard_uri()
    assert dashboard.startswith("http://127.0.0.1:"), dashboard
    assert cluster.is_dashboard_ready()
    other = random.randint(1000, 9999)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "compute.py").write_text(f"print('doubled', 2 * {other})\n")
    ray_jobs = RayJobClient(dashboard)
    submission = ray_jobs.submit(
        "python compute.py", runtime_env={"working_dir": str(tmp_path / "work")}
    )
    info = ray_jobs.wait(submission, timeout=300)
    assert info.status is RayJobState.SUCCEEDED, info
    assert f"doubled {2 * other}" in ray_jobs.logs(submission)

    details = str(cluster.details())
    assert dashboard in details
    assert re.search(r"ray reports +CPU \d+/2, ", details), details  # what Ray says it has

    cluster.down(wait=True, timeout=300, poll=0.5)
    wait_gone(ray, "the Ray cluster's processes after cluster.down()")


def _walkthrough(seed: int, home: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    env.pop("FLAREKIT_KUBECONFIG", None)
    env |= {"HOME": str(home), "KUBECONFIG": str(home / "no-such-kubeconfig")}
    done = subprocess.run(
        [sys.executable, "-m", "flarekit.walkthrough", "--seed", str(seed)],
        capture_output=True, text=True, env=env, cwd=home, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    return done.stdout


def _losses(out: str) -> list[float]:
    return [float(x) for x in re.findall(r"epoch \d/3 loss=(\d+\.\d+)", out)]


@pytest.mark.timeout(1500)
def test_the_walkthrough_trains_for_real_and_its_seed_changes_the_losses(tmp_path: Path) -> None:
    first = _walkthrough(1, tmp_path)
    second = _walkthrough(2, tmp_path)
    for out, seed in ((first, 1), (second, 2)):
        # the training function's own output, read from its pod's log
        log = out.split("The first node's log:", 1)[1]
        assert f"training on 2 processes (node 0), seed {seed}" in log
        assert len(_losses(log)) == 3 and re.search(r"done: y = -?\d+\.\d\dx \+ -?\d+\.\d\d", log)
        # the Ray job's own output
        assert "sum of the squares of 0..99, computed in Ray tasks: 328350" in out
        assert "cluster resources: {" in out and "'CPU': 2.0" in out
        assert "[simulated]" not in out
        assert "-> checked: nothing is left on the practice cluster" in out
    assert _losses(first) != _losses(second)
