"""The simulated Ray dashboards: reached like the real ones through the cluster's Services,
answering Ray's Jobs API for jobs that submitter pods or HTTP clients submitted, and saying
that they are simulated."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from flarekit_testing.apiserver._errors import ApiError
from flarekit_testing.controlplane._raydash import RayDashboards

JSON = dict[str, Any]
HEAD = "http://demo-head-svc.team.svc.cluster.local:8265"


def _service(ports: list[JSON]) -> JSON:
    return {
        "spec": {"selector": {"ray.io/cluster": "demo", "ray.io/node-type": "head"}, "ports": ports}
    }


def _pod(name: str, phase: str, labels: JSON, containers: list[JSON], **status: Any) -> JSON:
    return {
        "metadata": {"name": name, "namespace": "team", "labels": labels},
        "spec": {"containers": containers},
        "status": {"phase": phase, **status},
    }


class Cluster:
    """What the dashboards read from the API: one Service and some pods."""

    def __init__(self) -> None:
        self.service: JSON | None = _service([{"name": "dashboard", "port": 8265}])
        self.pods: list[JSON] = [
            _pod(
                "demo-head",
                "Running",
                {"ray.io/cluster": "demo", "ray.io/node-type": "head"},
                [{"name": "ray-head"}],
            )
        ]

    def get(self, path: str) -> JSON:
        if path.startswith("/api/v1/namespaces/team/services/demo-head-svc"):
            if self.service is None:
                raise ApiError(404, "NotFound", "not found")
            return self.service
        if path.startswith("/api/v1/namespaces/team/pods"):
            if "labelSelector" in path:
                return {
                    "items": [p for p in self.pods if "ray.io/node-type" in p["metadata"]["labels"]]
                }
            return {"items": self.pods}
        raise ApiError(404, "NotFound", path)


def _submitter(phase: str, runtime_env: JSON | None = None, **status: Any) -> JSON:
    command = ["ray", "job", "submit", "--address", HEAD]
    if runtime_env is not None:
        command += ["--runtime-env-json", json.dumps(runtime_env)]
    command += ["--submission-id", "job-1", "--", "python", "train.py"]
    return _pod(
        "hello-abcde",
        phase,
        {"job-name": "hello"},
        [{"name": "submit", "command": command}],
        **status,
    )


def test_a_submitter_pod_submits_and_the_job_follows_its_life() -> None:
    cluster = Cluster()
    dashboards = RayDashboards(cluster.get, pod_run_time=1.0)
    assert dashboards.answer("GET", f"{HEAD}/api/jobs/job-1", b"")[0] == 404
    cluster.pods.append(_submitter("Running", startTime="2026-01-01T00:00:00Z"))
    status, job = dashboards.answer("GET", f"{HEAD}/api/jobs/job-1", b"")
    assert status == 200
    assert (job["status"], job["entrypoint"], job["submission_id"]) == (
        "RUNNING",
        "python train.py",
        "job-1",
    )
    assert "simulated" in job["message"]
    cluster.pods[-1] = _submitter(
        "Succeeded",
        startTime="2026-01-01T00:00:00Z",
        containerStatuses=[
            {"state": {"terminated": {"exitCode": 0, "finishedAt": "2026-01-01T00:00:02Z"}}}
        ],
    )
    status, job = dashboards.answer("GET", f"{HEAD}/api/jobs/job-1", b"")
    assert (job["status"], job["end_time"] - job["start_time"]) == ("SUCCEEDED", 2000)
    # The finished job stays known after its pod is gone, as on a real head.
    cluster.pods.pop()
    assert dashboards.answer("GET", f"{HEAD}/api/jobs/job-1", b"")[1]["status"] == "SUCCEEDED"


def test_the_runtime_environment_fails_the_job() -> None:
    cluster = Cluster()
    dashboards = RayDashboards(cluster.get, pod_run_time=1.0)
    cluster.pods.append(
        _submitter(
            "Succeeded",
            {"env_vars": {"FLAREKIT_SIMULATED_EXIT_CODE": "3"}},
            startTime="2026-01-01T00:00:00Z",
            containerStatuses=[
                {"state": {"terminated": {"exitCode": 0, "finishedAt": "2026-01-01T00:00:01Z"}}}
            ],
        )
    )
    _status, job = dashboards.answer("GET", f"{HEAD}/api/jobs/job-1", b"")
    assert job["status"] == "FAILED"
    assert "exit code 3" in job["message"] and job["driver_exit_code"] == 3


def test_http_submission_runs_for_its_duration_and_can_be_stopped() -> None:
    dashboards = RayDashboards(Cluster().get, pod_run_time=0.0)
    body = {"entrypoint": "python a.py", "submission_id": "h1"}
    assert dashboards.answer("POST", f"{HEAD}/api/jobs/", json.dumps(body).encode()) == (
        200,
        {"job_id": None, "submission_id": "h1"},
    )
    assert dashboards.answer("POST", f"{HEAD}/api/jobs/", json.dumps(body).encode())[0] == 400
    assert dashboards.answer("GET", f"{HEAD}/api/jobs/h1", b"")[1]["status"] == "SUCCEEDED"
    long = {
        "entrypoint": "x",
        "submission_id": "h2",
        "runtime_env": {"env_vars": {"FLAREKIT_SIMULATED_DURATION": "1h"}},
    }
    dashboards.answer("POST", f"{HEAD}/api/jobs/", json.dumps(long).encode())
    assert dashboards.answer("GET", f"{HEAD}/api/jobs/h2", b"")[1]["status"] == "RUNNING"
    assert dashboards.answer("DELETE", f"{HEAD}/api/jobs/h2", b"")[0] == 400  # not finished
    assert dashboards.answer("POST", f"{HEAD}/api/jobs/h2/stop", b"") == (200, {"stopped": True})
    assert dashboards.answer("GET", f"{HEAD}/api/jobs/h2", b"")[1]["status"] == "STOPPED"
    assert dashboards.answer("DELETE", f"{HEAD}/api/jobs/h2", b"") == (200, {"deleted": True})
    assert [j["submission_id"] for j in dashboards.jobs("team", "demo")] == ["h1"]


@pytest.mark.parametrize(
    ("url", "change", "why"),
    [
        ("http://example.com/api/jobs/", None, "not a Service"),
        (f"{HEAD}/api/jobs/", "no service", "no Service team/demo-head-svc"),
        ("http://demo-head-svc.team.svc.cluster.local:10001/api/jobs/", None, "no port 10001"),
        (f"{HEAD}/api/jobs/", "head not running", "no running pod"),
        (f"{HEAD}/api/jobs/", "not a dashboard port", "only Ray heads' dashboards"),
    ],
)
def test_what_is_not_a_running_head_dashboard_is_refused(
    url: str, change: str | None, why: str
) -> None:
    cluster = Cluster()
    if change == "no service":
        cluster.service = None
    elif change == "head not running":
        cluster.pods[0]["status"]["phase"] = "Pending"
    elif change == "not a dashboard port":
        cluster.service = _service([{"name": "client", "port": 8265, "targetPort": 10001}])
    status, reason = RayDashboards(cluster.get, 1.0).answer("GET", url, b"")
    assert status == 502 and why in reason


def test_it_is_an_http_proxy_and_says_it_is_simulated() -> None:
    dashboards = RayDashboards(Cluster().get, 1.0).start()
    try:
        proxy = urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{dashboards.port}"})
        opener = urllib.request.build_opener(proxy)
        with opener.open(f"{HEAD}/api/version", timeout=5) as answer:
            assert answer.headers["X-Flarekit-Simulated"] == "ray-dashboard"
            assert json.loads(answer.read())["ray_version"] == "simulated"
    finally:
        dashboards.stop()
