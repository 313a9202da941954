"""DistributedJob on a Ray cluster: the launcher entrypoint, per-node torchrun, refusals."""

from __future__ import annotations

import json
import shlex
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from flarekit._validation import ConfigError
from flarekit.job._distributed import DistributedJob
from flarekit.job._jobstate import JobState
from flarekit.job._ray_launch import RayRun, launcher_source, node_command


class _Dashboard:
    """Answers the three Jobs API calls a submission makes, on 127.0.0.1."""

    def __init__(self) -> None:
        self.submitted: list[dict[str, Any]] = []
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                dashboard.submitted.append(json.loads(self.rfile.read(length)))
                self._reply({"submission_id": "raysubmit_1"})

            def do_GET(self) -> None:
                message = "Job entrypoint command failed with exit code 1"
                job = {"submission_id": "raysubmit_1", "status": "FAILED", "entrypoint": "x"}
                self._reply({**job, "message": message})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def dashboard() -> Iterator[_Dashboard]:
    fake = _Dashboard()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


class _Cluster:
    """Stands for `flarekit.cluster.Cluster`: only its dashboard address is used."""

    def __init__(self, url: str) -> None:
        self.url = url

    def cluster_dashboard_uri(self) -> str:
        return self.url


def test_submits_the_launcher_with_the_job_spec(dashboard: _Dashboard) -> None:
    job = DistributedJob(
        "on-ray", script="train.py", args=["--epochs", "1"], j="2x4", cpu=4, gpu=1, mem_mb=1024,
        env={"SEED": "7"},
    )  # fmt: skip
    run = job.submit(_Cluster(dashboard.url))
    assert isinstance(run, RayRun) and run.submission_id == "raysubmit_1"
    (body,) = dashboard.submitted
    assert body["metadata"] == {"flarekit.dev/job": "on-ray"}
    python, dash_c, source, spec_text = shlex.split(body["entrypoint"])
    assert (python, dash_c, source) == ("python", "-c", launcher_source())
    spec = json.loads(spec_text)
    assert spec["strategy"] == "STRICT_SPREAD"  # gang: all nodes or none
    assert spec["bundle"] == {"CPU": 4.0, "GPU": 1.0, "memory": 1024.0 * 1024 * 1024}
    assert node_command(spec, 1, "10.0.0.5", 29500) == [
        "torchrun", "--nnodes", "2", "--nproc-per-node", "4", "--node-rank", "1",
        "--master-addr", "10.0.0.5", "--master-port", "29500", "train.py", "--epochs", "1",
    ]  # fmt: skip
    compile(source, "launcher", "exec")  # the code sent is valid Python
    status = run.status()
    assert (status.state, status.message) == (
        JobState.FAILED, "Job entrypoint command failed with exit code 1",
    )  # fmt: skip


def test_module_and_no_gang(dashboard: _Dashboard) -> None:
    job = DistributedJob("m", module="pkg.train", j="3", gang=False)
    job.submit(dashboard.url)
    spec = json.loads(shlex.split(dashboard.submitted[0]["entrypoint"])[-1])
    assert spec["strategy"] == "SPREAD"
    assert node_command(spec, 0, "h", 1)[-2:] == ["-m", "pkg.train"]
    assert node_command(spec, 0, "h", 1)[2] == "1"  # "3" is one node of three processes


def test_what_ray_has_no_place_for_is_refused(dashboard: _Dashboard) -> None:
    job = DistributedJob(
        "r", script="t.py", backoff_limit=2, ttl_seconds_after_finished=5,
    )  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        job.submit(dashboard.url)
    assert caught.value.fields == ["ttl_seconds_after_finished", "backoff_limit"]
    assert "not supported on Ray" in str(caught.value)
    job = DistributedJob("r", script="t.py", mounts=["type=volume,src=pvc,dst=/d"])
    with pytest.raises(ConfigError, match="mounts"):
        job.submit(dashboard.url)
    assert dashboard.submitted == []
