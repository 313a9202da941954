"""RayJobClient against a real Ray head. Runs inside the namespace set up by ray_head_in_netns.py.

Not collected by a plain ``pytest`` run (the name does not start with ``test_``): the
``slow`` test in test_ray_jobs_integration.py starts the Ray head and runs this file.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import sys
import time
import uuid

import pytest

from flarekit.ray import (
    JobDetails,
    RayJobClient,
    RayJobNotFound,
    RayJobsApiError,
    RayJobState,
    RayJobTimeout,
)

ADDRESS = os.environ.get("FLAREKIT_RAY_DASHBOARD")
pytestmark = pytest.mark.skipif(
    ADDRESS is None, reason="run through test_ray_jobs_integration.py, which starts Ray"
)

HELLO = "python -c \"print('hello from ray')\""
FOLLOWED = (
    'python -c "import time\nfor i in range(8):\n'
    "    print(f'line {i}', flush=True)\n    time.sleep(0.4)\""
)
SLEEPER = 'python -c "import time; time.sleep(600)"'


def unique(name: str) -> str:
    return f"flarekit-{name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def client() -> RayJobClient:
    assert ADDRESS is not None
    return RayJobClient(ADDRESS, timeout=30)


@pytest.fixture(scope="module")
def hello(client: RayJobClient) -> JobDetails:
    """One finished job, shared by the tests that read it."""
    submission_id = client.submit(
        HELLO, submission_id=unique("hello"), metadata={"suite": "flarekit"}
    )
    return client.wait(submission_id, timeout=90, poll=0.2)


def wait_for_status(client: RayJobClient, submission_id: str, status: RayJobState) -> None:
    deadline = time.monotonic() + 60
    while client.status(submission_id) is not status:
        assert time.monotonic() < deadline, f"{submission_id} never reached {status}"
        time.sleep(0.2)


def test_version(client: RayJobClient) -> None:
    version = client.version()
    assert version.ray_version == importlib.metadata.version("ray")
    assert version.version


def test_submit_wait_and_logs(client: RayJobClient, hello: JobDetails) -> None:
    assert hello.status is RayJobState.SUCCEEDED, hello.message
    assert hello.submission_id is not None and hello.submission_id.startswith("flarekit-hello-")
    assert hello.entrypoint == HELLO
    assert hello.metadata == {"suite": "flarekit"}
    assert hello.driver_exit_code == 0
    assert hello.started_at is not None and hello.ended_at is not None
    assert hello.ended_at >= hello.started_at
    assert "hello from ray" in client.logs(hello.submission_id)


def test_generated_submission_id_and_runtime_env(client: RayJobClient) -> None:
    submission_id = client.submit(
        "python -c \"import os; print(os.environ['FLAREKIT_GREETING'])\"",
        runtime_env={"env_vars": {"FLAREKIT_GREETING": "greetings from runtime_env"}},
    )
    assert submission_id.startswith("raysubmit_")
    final = client.wait(submission_id, timeout=90, poll=0.2)
    assert final.status is RayJobState.SUCCEEDED, final.message
    assert final.runtime_env is not None
    assert final.runtime_env["env_vars"] == {"FLAREKIT_GREETING": "greetings from runtime_env"}
    assert "greetings from runtime_env" in client.logs(submission_id)


def test_follow_logs_streams_a_running_job(client: RayJobClient) -> None:
    submission_id = client.submit(FOLLOWED, submission_id=unique("follow"))
    chunks = list(client.follow_logs(submission_id, poll=0.2, timeout=90))
    text = "".join(chunks)
    positions = [text.index(f"line {i}\n") for i in range(8)]
    assert positions == sorted(positions)
    assert len(chunks) >= 2, f"expected output in several chunks while running, got {chunks!r}"
    assert all(chunk.endswith("\n") for chunk in chunks[:-1])
    assert client.status(submission_id) is RayJobState.SUCCEEDED


def test_failed_job_reports_its_exit_code(client: RayJobClient) -> None:
    submission_id = client.submit(
        'python -c "import sys; sys.exit(3)"', submission_id=unique("fail")
    )
    final = client.wait(submission_id, timeout=90, poll=0.2)
    assert final.status is RayJobState.FAILED
    assert final.driver_exit_code == 3
    assert final.message and "3" in final.message


def test_stop_a_sleeping_job(client: RayJobClient) -> None:
    submission_id = client.submit(SLEEPER, submission_id=unique("sleep"))
    wait_for_status(client, submission_id, RayJobState.RUNNING)
    with pytest.raises(RayJobTimeout) as timed_out:
        client.wait(submission_id, timeout=1, poll=0.2)
    assert timed_out.value.last_status == "RUNNING"
    with pytest.raises(RayJobsApiError) as refused:
        client.delete(submission_id)
    assert "terminal" in refused.value.message, refused.value.body
    assert client.stop(submission_id) is True
    assert client.wait(submission_id, timeout=60, poll=0.2).status is RayJobState.STOPPED
    # Ray answers "stopped" while the job's supervisor actor is alive, and that actor exits a
    # moment after it records STOPPED: a second stop is a no-op once it has gone.
    deadline = time.monotonic() + 30
    while client.stop(submission_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert client.stop(submission_id) is False
    assert client.status(submission_id) is RayJobState.STOPPED


def test_list_jobs(client: RayJobClient, hello: JobDetails) -> None:
    listed = {job.submission_id: job for job in client.list_jobs() if job.submission_id}
    assert hello.submission_id in listed
    assert listed[hello.submission_id].status is RayJobState.SUCCEEDED
    assert listed[hello.submission_id].type == "SUBMISSION"


def test_duplicate_submission_id_is_refused(client: RayJobClient, hello: JobDetails) -> None:
    with pytest.raises(RayJobsApiError) as info:
        client.submit("echo again", submission_id=hello.submission_id)
    assert "already exists" in info.value.message, info.value.body


def test_unknown_job_is_not_found(client: RayJobClient) -> None:
    for call in (client.get, client.logs, client.stop, client.delete):
        with pytest.raises(RayJobNotFound) as info:
            call("flarekit-no-such-job")
        assert info.value.submission_id == "flarekit-no-such-job"
        assert "does not exist" in info.value.message
    with pytest.raises(RayJobNotFound):
        next(client.follow_logs("flarekit-no-such-job"))


# Ray's job monitor may re-create the record of a job deleted within a second or so of
# finishing (as FAILED, "Job supervisor actor died"), so this deletes a job that finished a
# while ago: the shared `hello` job, last, after the tests that read it.
SETTLED_AFTER = datetime.timedelta(seconds=5)


def test_delete_a_finished_job(client: RayJobClient, hello: JobDetails) -> None:
    assert hello.submission_id is not None and hello.ended_at is not None
    settled = hello.ended_at + SETTLED_AFTER - datetime.datetime.now(datetime.UTC)
    time.sleep(max(0.0, settled.total_seconds()))
    assert client.delete(hello.submission_id) is True
    with pytest.raises(RayJobNotFound):
        client.get(hello.submission_id)
    assert hello.submission_id not in {job.submission_id for job in client.list_jobs()}
    with pytest.raises(RayJobNotFound):
        client.delete(hello.submission_id)


def test_local_working_dir_and_py_modules_are_uploaded(
    client: RayJobClient, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("project")
    (root / "main.py").write_text(
        "import os, helpers\n"
        "print('answer', helpers.ANSWER, flush=True)\n"
        "print('data shipped:', os.path.exists('data'), flush=True)\n"
    )
    (root / "data").mkdir()
    (root / "data" / "big.bin").write_bytes(b"0" * 4096)
    modules = tmp_path_factory.mktemp("modules")
    (modules / "helpers.py").write_text("ANSWER = 42\n")
    env = {
        "working_dir": str(root),
        "py_modules": [str(modules / "helpers.py")],
        "excludes": ["data/"],
    }
    first = client.submit("python main.py", submission_id=unique("upload"), runtime_env=env)
    details = client.wait(first, timeout=120, poll=0.2)
    logs = client.logs(first)
    assert details.status is RayJobState.SUCCEEDED, logs
    assert "answer 42" in logs and "data shipped: False" in logs
    uploaded = details.runtime_env or {}
    assert str(uploaded.get("working_dir", "")).startswith("gcs://_ray_pkg_")
    # the same content again: the same package, not uploaded twice
    second = client.submit("python main.py", submission_id=unique("upload"), runtime_env=env)
    again = client.wait(second, timeout=120, poll=0.2)
    assert (again.runtime_env or {}).get("working_dir") == uploaded.get("working_dir")


#: Stands in for torchrun with a rank that has left torchrun's session and process group (as a
#: rank that daemonises or is re-parented does), which real torchrun ranks do not do: the
#: watcher must find such a rank by PID, not by session. The real-torch stop test is below.
FAKE_TORCHRUN = """\
import os, subprocess, sys, time
# stands in for torchrun: one rank that leaves the process group, as re-parented ranks do
rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                        start_new_session=True)
folder = os.environ["PID_DIR"]
with open(os.path.join(folder, "pids.tmp"), "w") as out:
    out.write(f"{os.getpid()} {rank.pid}")
os.rename(os.path.join(folder, "pids.tmp"), os.path.join(folder, "pids"))
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_stop_ends_every_process_the_launcher_started(
    client: RayJobClient, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from flarekit.job import DistributedJob, JobState

    tools = tmp_path_factory.mktemp("tools")
    torchrun = tools / "torchrun"
    torchrun.write_text(f"#!{sys.executable}\n{FAKE_TORCHRUN}")
    torchrun.chmod(0o755)
    pids = tmp_path_factory.mktemp("pids")
    env = {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "PID_DIR": str(pids)}
    run = DistributedJob("stopped", script="train.py", j="1x1", env=env).submit(client)
    deadline = time.monotonic() + 90
    while not (pids / "pids").exists():
        assert time.monotonic() < deadline, run.logs()
        time.sleep(0.2)
    started = [int(p) for p in (pids / "pids").read_text().split()]
    assert all(_alive(p) for p in started)
    run.stop()
    run.wait(until={"Stopped", "Failed"}, timeout=60, progress=False)
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in started):
        assert time.monotonic() < deadline, f"still running after stop: {started}"
        time.sleep(0.2)
    assert run.status().state in (JobState.STOPPED, JobState.FAILED)


def test_a_gang_that_cannot_fit_fails_in_time_naming_the_resources(client: RayJobClient) -> None:
    from flarekit._wait import TerminalFailure
    from flarekit.job import DistributedJob

    # two nodes of 1 CPU each; three bundles of 1 CPU, one per node, cannot be placed
    run = DistributedJob("gang", script="train.py", j="3x1", placement_timeout=3).submit(client)
    started = time.monotonic()
    with pytest.raises(TerminalFailure):
        run.wait(timeout=90, progress=False)
    assert time.monotonic() - started < 60
    logs = run.logs()
    assert "could not place 3 bundles of {'CPU': 1.0} (STRICT_SPREAD: one per node)" in logs
    assert "within 3s; the cluster has 2 alive node(s)" in logs and "available now" in logs


# -- real PyTorch: DDP over gloo on CPU, with torchrun from the virtualenv of torch_venv.py ----

TORCH_BIN = os.environ.get("FLAREKIT_TORCH_BIN")
needs_torch = pytest.mark.skipif(
    TORCH_BIN is None, reason="run through test_ray_jobs_integration.py, which finds PyTorch"
)

#: A real (tiny) DDP training script: fits y = 3x + 1 on each rank's own data, gradients
#: averaged by DDP over gloo, then one explicit all_reduce. With ``--forever`` it keeps
#: training and writes its PID (and its torchrun agent's) to $PID_DIR, for the stop test.
TRAIN_DDP = """\
import os, sys, time
import torch
import torch.distributed as dist
from ddp_data import batch

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(1, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
x, y = batch(rank)
first = None
for step in range(40):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    first = loss.item() if first is None else first
total = torch.tensor([float(rank + 1)])
dist.all_reduce(total)
weight, bias = model.module.weight.item(), model.module.bias.item()
# One write per line: Ray runs workers unbuffered, where print() writes the text and its
# newline apart, and two ranks' lines on the shared pipe then run together.
sys.stdout.write(f"rank {rank}/{world} node {os.environ['GROUP_RANK']} local "
                 f"{os.environ['LOCAL_RANK']} all_reduce {total.item():g} loss {first:.4f} -> "
                 f"{loss.item():.4f} model {weight!r} {bias!r}\\n")
sys.stdout.flush()
if "--forever" in sys.argv:
    folder = os.environ["PID_DIR"]
    with open(os.path.join(folder, f"rank{rank}.tmp"), "w") as out:
        out.write(f"{os.getpid()} {os.getppid()}")
    os.rename(os.path.join(folder, f"rank{rank}.tmp"), os.path.join(folder, f"rank{rank}"))
    while True:
        dist.all_reduce(torch.ones(1))
        time.sleep(0.2)
dist.destroy_process_group()
"""
#: A module beside the script: shipped with it in the working_dir, imported by every rank.
DDP_DATA = """\
import torch

def batch(rank):
    generator = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(64, 1, generator=generator)
    return x, 3 * x + 1
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A local project folder with the DDP script, shipped to Ray as the job's working_dir."""
    root = tmp_path_factory.mktemp("ddp-project")
    (root / "train_ddp.py").write_text(TRAIN_DDP)
    (root / "ddp_data.py").write_text(DDP_DATA)
    return str(root)


def torch_env(**extra: str) -> dict[str, str]:
    """The job's environment: torchrun (and the Python it starts) from the torch virtualenv;
    gloo on the loopback interface, the only one in this network namespace."""
    assert TORCH_BIN is not None
    path = f"{TORCH_BIN}{os.pathsep}{os.environ['PATH']}"
    return {"PATH": path, "GLOO_SOCKET_IFNAME": "lo", **extra}


def rank_lines(logs: str) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for line in logs.splitlines():
        words = line.split("rank ", 1)[-1].split() if "all_reduce" in line else []
        if words:
            found[int(words[0].split("/")[0])] = words
    return found


@needs_torch
@pytest.mark.parametrize(
    ("j", "node_ranks"),
    [pytest.param("1x2", ["0", "0"], id="1x2"), pytest.param("2x1", ["0", "1"], id="2x1")],
)
def test_ddp_training_with_a_relative_script_succeeds(
    client: RayJobClient, project: str, j: str, node_ranks: list[str]
) -> None:
    from flarekit.job import DistributedJob, JobState

    job = DistributedJob(
        f"ddp-{j}", script="train_ddp.py", j=j, working_dir=project, env=torch_env(),
    )  # fmt: skip
    run = job.submit(client)
    status = run.wait(until={"Succeeded", "Failed", "Stopped"}, timeout=180, progress=False)
    logs = run.logs()
    assert status.state is JobState.SUCCEEDED, logs[-5000:]
    ranks = rank_lines(logs)
    assert sorted(ranks) == [0, 1], logs[-5000:]
    for rank, words in ranks.items():
        # "0/2 node N local L all_reduce 3 loss A -> B model W B"
        assert words[0] == f"{rank}/2"
        assert words[2] == node_ranks[rank]
        assert words[6] == "3", words  # 1 + 2 summed over both ranks
        assert float(words[10]) < float(words[8]) / 10, words  # it learned
    # DDP kept the replicas identical: both ranks end with the same parameters, bit for bit
    assert ranks[0][-2:] == ranks[1][-2:]
    assert abs(float(ranks[0][-2]) - 3) < 0.2 and abs(float(ranks[0][-1]) - 1) < 0.2
    assert "flarekit: node exit codes" in logs


def _processes_running(marker: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _alive(int(entry)):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    text = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if marker in text:
                found.append(f"{entry}: {text[:160]}")
    return found


@needs_torch
def test_stop_ends_every_torch_process_on_every_node(
    client: RayJobClient, project: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from flarekit.job import DistributedJob, JobState

    pids = tmp_path_factory.mktemp("torch-pids")
    job = DistributedJob(
        "ddp-stop", script="train_ddp.py", args=["--forever"], j="2x1", working_dir=project, env=torch_env(PID_DIR=str(pids)),
    )  # fmt: skip
    run = job.submit(client)
    deadline = time.monotonic() + 180
    while not all((pids / f"rank{r}").exists() for r in (0, 1)):
        assert time.monotonic() < deadline, run.logs()[-5000:]
        assert not run.status().finished, run.logs()[-5000:]
        time.sleep(0.2)
    # each rank and the torchrun agent that started it (one per node)
    started = sorted({int(p) for r in (0, 1) for p in (pids / f"rank{r}").read_text().split()})
    assert len(started) == 4 and all(_alive(p) for p in started), started
    assert len(_processes_running("train_ddp.py")) >= 4
    run.stop()
    final = run.wait(until={"Stopped", "Failed"}, timeout=60, progress=False)
    deadline = time.monotonic() + 30
    while any(_alive(p) for p in started) or _processes_running("train_ddp.py"):
        left = [p for p in started if _alive(p)], _processes_running("train_ddp.py")
        assert time.monotonic() < deadline, f"still running after stop: {left}"
        time.sleep(0.2)
    assert final.state is JobState.STOPPED, final
