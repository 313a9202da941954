"""Local execution, for real: a TrainJob from a function, with a package to install and a
local helper module, runs as a local process behind the same Kubernetes objects (FakeCluster
with `TrainJobController(local=True)`), and what it prints is what the function computed.

The package is a wheel built here and installed offline (``PIP_NO_INDEX``), so the test
needs no network; torch is not needed either: the function fits a line with plain Python."""

from __future__ import annotations

import os
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from trainjob_support import torch_runtime

from flarekit import ConfigError
from flarekit._wait import TerminalFailure
from flarekit.job import JobState, TrainJob
from flarekit_testing import FakeCluster, TrainJobController
from kube_support import client_for
from wait_support import wait_until

FAST: dict[str, Any] = {"timeout": 120, "poll": 0.05, "progress": False}

HELPER = '''
def points(n):
    """n points on y = 3x + 1."""
    xs = [i / n for i in range(n)]
    return xs, [3 * x + 1 for x in xs]
'''

PACKAGE = '''
def epoch(w, b, xs, ys, lr):
    """One full-batch gradient step of least squares; the weights and the loss before it."""
    n = len(xs)
    errors = [w * x + b - y for x, y in zip(xs, ys)]
    loss = sum(e * e for e in errors) / n
    w -= lr * 2 * sum(e * x for e, x in zip(errors, xs)) / n
    b -= lr * 2 * sum(errors) / n
    return w, b, loss
'''


def train(epochs: int = 4) -> None:
    import os

    import linefit_helpers  # type: ignore[import-not-found]
    import tinyfit  # type: ignore[import-not-found]

    print(f"pod {os.environ['HOSTNAME']} files in {os.environ['FLAREKIT_FILES']}", flush=True)
    xs, ys = linefit_helpers.points(32)
    w = b = 0.0
    for n in range(1, epochs + 1):
        w, b, loss = tinyfit.epoch(w, b, xs, ys, lr=0.5)
        print(f"epoch {n} loss={loss:.6f}", flush=True)
    print(f"fit: y = {w:.4f}x + {b:.4f}")


def crash() -> None:
    print("about to fail", flush=True)
    raise SystemExit(3)


def sleep_long() -> None:
    import os
    import time

    print(f"pid {os.getpid()}", flush=True)
    time.sleep(600)


def _wheel(folder: Path) -> Path:
    """A pure-Python wheel of the package `tinyfit`, made by hand (no build backend needed)."""
    path = folder / "tinyfit-0.1-py3-none-any.whl"
    files = {
        "tinyfit/__init__.py": PACKAGE,
        "tinyfit-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinyfit\nVersion: 0.1\n",
        "tinyfit-0.1.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},,\n" for name in files) + "tinyfit-0.1.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in {**files, "tinyfit-0.1.dist-info/RECORD": record}.items():
            wheel.writestr(name, text)
    return path


def _plain_runtime() -> dict[str, Any]:
    runtime = torch_runtime("plain", image="python:3.12")
    runtime["metadata"]["labels"] = {}
    runtime["spec"]["mlPolicy"] = {"numNodes": 1}
    return runtime


@pytest.fixture
def local() -> Iterator[tuple[FakeCluster, TrainJobController]]:
    controller = TrainJobController(local=True)
    with FakeCluster(
        releases={"trainer": "v2.3.0", "jobset": "v0.12.0"}, tick_interval=0.05,
        controllers=[controller],
    ) as fc:  # fmt: skip
        fc.create(_plain_runtime())
        yield fc, controller
    assert controller.pods.local is not None and controller.pods.local.running() == []


def _expected(epochs: int = 4) -> list[str]:
    """The same computation in this process: what the job must print."""
    scope: dict[str, Any] = {}
    exec(HELPER + PACKAGE, scope)  # the test's own source
    xs, ys = scope["points"](32)
    w = b = 0.0
    lines = []
    for n in range(1, epochs + 1):
        w, b, loss = scope["epoch"](w, b, xs, ys, 0.5)
        lines.append(f"epoch {n} loss={loss:.6f}")
    return [*lines, f"fit: y = {w:.4f}x + {b:.4f}"]


def test_a_function_with_a_package_and_a_helper_trains_locally(
    local: tuple[FakeCluster, TrainJobController], tmp_path: Path
) -> None:
    fc, _ = local
    helper = tmp_path / "linefit_helpers.py"
    helper.write_text(HELPER)
    job = TrainJob(
        "fit", runtime="plain", func=train, packages_to_install=[str(_wheel(tmp_path))],
        files=[helper], env={"PIP_NO_INDEX": "1"}, client=client_for(fc),
    ).submit()  # fmt: skip
    lines = list(job.logs(follow=True))
    assert job.wait(**FAST).state is JobState.SUCCEEDED
    pod = job.pods()[0].name
    assert lines[0].startswith(f"pod {pod} files in ")
    assert lines[1:] == _expected()
    losses = [float(line.rsplit("=", 1)[1]) for line in lines[1:-1]]
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0] / 10
    # the pod ended as the process did
    assert fc.get("pods", pod, "default")["status"]["phase"] == "Succeeded"


def test_an_exit_code_fails_the_pod_and_the_job(
    local: tuple[FakeCluster, TrainJobController],
) -> None:
    fc, _ = local
    job = TrainJob("crash", runtime="plain", func=crash, client=client_for(fc)).submit()
    with pytest.raises(TerminalFailure, match=r"pod crash-node-0-0-\S+ exited with code 3"):
        job.wait(**FAST)
    assert "about to fail" in job.logs()
    status = fc.get("pods", job.pods()[0].name, "default")["status"]
    assert status["phase"] == "Failed"
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3


def test_deleting_the_job_kills_its_process(
    local: tuple[FakeCluster, TrainJobController],
) -> None:
    fc, controller = local
    job = TrainJob("long", runtime="plain", func=sleep_long, client=client_for(fc)).submit()
    first = next(iter(job.logs(follow=True)))
    pid = int(first.split()[1])
    os.kill(pid, 0)  # running
    job.delete(wait=True, timeout=60)
    wait_until(lambda: not _alive(pid), f"process {pid} ends with its pod", poll=0.05)
    assert controller.pods.local is not None and controller.pods.local.running() == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_pod_without_a_command_stays_simulated_and_says_why(
    local: tuple[FakeCluster, TrainJobController],
) -> None:
    fc, controller = local
    job = TrainJob("entry", runtime="plain", image="python:3.12", client=client_for(fc)).submit()
    pod = wait_until(lambda: job.pods(), "the job's pod", poll=0.05)[0].name
    logs = wait_until(
        lambda: "it does not end by itself" in job.logs() and job.logs(),
        "the pod's note",
        poll=0.05,
    )
    assert logs.startswith("[simulated] this pod is simulated, nothing runs in it: container")
    assert "'node' has no command" in logs and "image 'python:3.12'" in logs
    assert "it does not end by itself" in logs
    controller.wait_ticks(5)  # no success is invented for it
    assert job.status().state is JobState.RUNNING
    assert fc.get("pods", pod, "default")["status"]["phase"] == "Running"
    job.delete(wait=True, timeout=60)


def test_a_simulated_pod_ends_as_its_container_asks(
    local: tuple[FakeCluster, TrainJobController],
) -> None:
    fc, _ = local
    job = TrainJob(
        "asked", runtime="plain", image="python:3.12", client=client_for(fc),
        env={"FLAREKIT_SIMULATED_DURATION": "0.2", "FLAREKIT_SIMULATED_EXIT_CODE": "4"},
    ).submit()  # fmt: skip
    with pytest.raises(TerminalFailure, match="exited with code 4"):
        job.wait(**FAST)
    assert all(line.startswith("[simulated]") for line in job.logs().splitlines())


def test_shipping_is_checked_before_any_request(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * (600 * 1024))
    with pytest.raises(ConfigError) as info:
        TrainJob(
            "t", func=train, packages_to_install=["--index-url=x", 3],  # type: ignore[list-item]
            files=[tmp_path, big, tmp_path / "missing.py"],
        )  # fmt: skip
    fields = info.value.fields
    assert "packages_to_install[0]" in fields and "packages_to_install[1]" in fields
    assert {"files[0]", "files[2]", "files"} <= set(fields), fields
    with pytest.raises(ConfigError, match="needs a command"):
        TrainJob("t", image="x:1", packages_to_install=["numpy"])


def test_the_interpreter_is_this_one(local: tuple[FakeCluster, TrainJobController]) -> None:
    fc, _ = local
    job = TrainJob(
        "which", runtime="plain", command=["python", "-c", "import sys; print(sys.executable)"],
        client=client_for(fc),
    ).submit()  # fmt: skip
    job.wait(**FAST)
    assert job.logs().strip() == sys.executable
