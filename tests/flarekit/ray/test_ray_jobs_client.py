"""RayJobClient against a scripted dashboard: results, error mapping, wait and follow_logs."""

from __future__ import annotations

import datetime

import pytest
from fake_dashboard import FakeDashboard, Reply, job

from flarekit.ray import (
    RayJobClient,
    RayJobNotFound,
    RayJobsApiError,
    RayJobState,
    RayJobTimeout,
)

# The job server wraps the job agent's error, traceback and all, in a traceback of its own.
RAY_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "job_head.py", line 419, in submit_job\n'
    "    resp = await job_agent_client.submit_job_internal(submit_request)\n"
    '  File "job_head.py", line 134, in _raise_error\n'
    "    raise RuntimeError(\n"
    "RuntimeError: Request failed with status code 400: Traceback (most recent call last):\n"
    '  File "job_agent.py", line 74, in submit_job\n'
    "    submission_id = await self.get_job_manager().submit_job(\n"
    "ValueError: Job with submission_id train-1 already exists. Use another submission_id.\n"
    ".\n"
)


def test_submit_posts_json_to_the_jobs_collection(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route(
        "POST", "/api/jobs/", Reply(body={"job_id": "raysubmit_a", "submission_id": "raysubmit_a"})
    )
    assert client.submit("python -c 'print(1)'") == "raysubmit_a"
    sent = dashboard.requests[-1]
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.json() == {"entrypoint": "python -c 'print(1)'"}


def test_get_parses_details_and_keeps_unknown_fields(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    body = job(
        "train-1",
        "FAILED",
        end_time=1700000005000,
        message="Job entrypoint command failed with exit code 2",
        driver_info={"id": "02000000", "node_ip_address": "10.0.0.1", "pid": "42", "more": 1},
        metadata={"owner": "me"},
        driver_exit_code=2,
        new_field_from_newer_ray={"x": 1},
    )
    dashboard.route("GET", "/api/jobs/train-1", Reply(body=body))
    details = client.get("train-1")
    assert details.status is RayJobState.FAILED
    assert details.is_terminal
    assert details.message == "Job entrypoint command failed with exit code 2"
    assert details.driver_info is not None and details.driver_info.pid == "42"
    assert details.driver_info.model_extra == {"more": 1}
    assert details.metadata == {"owner": "me"}
    assert details.driver_exit_code == 2
    assert details.started_at == datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=datetime.UTC)
    assert details.ended_at is not None
    assert (details.ended_at - details.started_at).total_seconds() == 5
    assert details.model_extra == {"new_field_from_newer_ray": {"x": 1}}
    assert details.model_dump()["new_field_from_newer_ray"] == {"x": 1}


def test_status_logs_stop_delete(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j", "PENDING", start_time=0)))
    dashboard.route("GET", "/api/jobs/j/logs", Reply(body={"logs": "hello\n"}))
    dashboard.route("POST", "/api/jobs/j/stop", Reply(body={"stopped": True}))
    dashboard.route("DELETE", "/api/jobs/j", Reply(body={"deleted": False}))
    assert client.status("j") is RayJobState.PENDING
    assert client.get("j").started_at is None
    assert client.logs("j") == "hello\n"
    assert client.stop("j") is True
    assert client.delete("j") is False
    assert [(r.method, r.path) for r in dashboard.requests] == [
        ("GET", "/api/jobs/j"),
        ("GET", "/api/jobs/j"),
        ("GET", "/api/jobs/j/logs"),
        ("POST", "/api/jobs/j/stop"),
        ("DELETE", "/api/jobs/j"),
    ]


def test_list_jobs_reads_current_and_pre_2_0_shapes(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    driver = job(None, "SUCCEEDED", type="DRIVER", job_id="01000000")
    old = {"status": "SUCCEEDED", "entrypoint": "echo", "message": "", "metadata": {}}
    dashboard.route(
        "GET", "/api/jobs/", Reply(body=[job("a", "RUNNING"), driver]), Reply(body={"old": old})
    )
    jobs = client.list_jobs()
    assert [(j.submission_id, j.job_id, j.type, j.status) for j in jobs] == [
        ("a", None, "SUBMISSION", RayJobState.RUNNING),
        (None, "01000000", "DRIVER", RayJobState.SUCCEEDED),
    ]
    assert [j.submission_id for j in client.list_jobs()] == ["old"]


def test_version_and_a_path_prefix(dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/ray/api/version", Reply(body={"version": "4", "ray_version": "2.9.0"}))
    client = RayJobClient(dashboard.url + "/ray/", retries=0)
    assert client.address == dashboard.url + "/ray"
    assert client.version().ray_version == "2.9.0"


def test_version_404_says_this_is_no_ray_dashboard(client: RayJobClient) -> None:
    with pytest.raises(RayJobsApiError) as info:
        client.version()
    assert info.value.status == 404
    assert "is it a Ray dashboard" in str(info.value)


def test_unknown_job_is_ray_job_not_found(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/gone", Reply(404, "Job gone does not exist"))
    dashboard.route("POST", "/api/jobs/gone/stop", Reply(404, "Job gone does not exist"))
    for call in (client.get, client.stop):
        with pytest.raises(RayJobNotFound) as info:
            call("gone")
        assert info.value.submission_id == "gone"
        assert info.value.status == 404
        assert info.value.message == "Job gone does not exist"
        assert isinstance(info.value, LookupError)


def test_ray_tracebacks_become_their_last_line(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(500, RAY_TRACEBACK))
    with pytest.raises(RayJobsApiError) as info:
        client.submit("echo", submission_id="train-1")
    error = info.value
    assert (error.status, error.method, error.path) == (500, "POST", "/api/jobs/")
    assert error.message == (
        "ValueError: Job with submission_id train-1 already exists. Use another submission_id."
    )
    assert "job_head.py" in error.body
    assert dashboard.count("POST") == 1


@pytest.mark.parametrize(
    ("reply", "status", "says"),
    [
        (Reply(400, "Can only stop submission type jobs"), 400, "Can only stop submission"),
        (Reply(500, "Traceback (most recent call last):\n  x\n"), 500, "HTTP 500: x"),
        (Reply(401, ""), 401, "check the token"),
        (Reply(403, "Forbidden"), 403, "Forbidden (check the token"),
        (
            Reply(302, "", headers={"Location": "https://login.example.com/oauth"}),
            302,
            "redirected to https://login.example.com/oauth",
        ),
        (
            Reply(200, "<html>Log in</html>", headers={"Content-Type": "text/html"}),
            200,
            "expected a JSON answer from the Ray dashboard but got text/html",
        ),
        (Reply(body={"stopped": "yes"}), 200, "expected {'stopped': bool}"),
    ],
)
def test_error_answers_are_ray_jobs_api_errors(
    client: RayJobClient, dashboard: FakeDashboard, reply: Reply, status: int, says: str
) -> None:
    dashboard.route("POST", "/api/jobs/j/stop", reply)
    with pytest.raises(RayJobsApiError) as info:
        client.stop("j")
    assert info.value.status == status
    assert says in str(info.value)
    assert not isinstance(info.value, RayJobNotFound)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"entrypoint": "x"}, "Field required at status"),
        (job(status="EXPLODED"), "at status"),
        ([], "at <root>"),
    ],
)
def test_unexpected_job_shapes_are_api_errors(
    client: RayJobClient, dashboard: FakeDashboard, body: object, says: str
) -> None:
    dashboard.route("GET", "/api/jobs/j", Reply(body=body))
    with pytest.raises(RayJobsApiError, match="unexpected answer shape for JobDetails") as info:
        client.get("j")
    assert says in info.value.message


def test_wait_polls_until_terminal(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route(
        "GET",
        "/api/jobs/j",
        Reply(body=job("j", "PENDING")),
        Reply(body=job("j", "RUNNING")),
        Reply(body=job("j", "SUCCEEDED", message="Job finished successfully.")),
    )
    final = client.wait("j", timeout=30, poll=0.001)
    assert final.status is RayJobState.SUCCEEDED
    assert final.message == "Job finished successfully."
    assert dashboard.count("GET", "/api/jobs/j") == 3


def test_wait_times_out_naming_the_last_status(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j", "PENDING")))
    with pytest.raises(RayJobTimeout) as info:
        client.wait("j", timeout=0.05, poll=0.01)
    assert info.value.last_status == "PENDING"
    assert isinstance(info.value, TimeoutError)
    assert "'j' did not finish within 0.05s (last status: PENDING)" in str(info.value)
    assert "stop('j')" in str(info.value)


def test_follow_logs_yields_whole_new_lines_until_the_end(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route(
        "GET",
        "/api/jobs/j",
        Reply(body=job("j", "PENDING")),
        Reply(body=job("j", "RUNNING")),
        Reply(body=job("j", "RUNNING")),
        Reply(body=job("j", "RUNNING")),
        Reply(body=job("j", "SUCCEEDED")),
    )
    dashboard.route(
        "GET",
        "/api/jobs/j/logs",
        Reply(body={"logs": ""}),
        Reply(body={"logs": "a\nb"}),
        Reply(body={"logs": "a\nb"}),
        Reply(body={"logs": "a\nb\nc\n"}),
        Reply(body={"logs": "a\nb\nc\nd"}),
    )
    chunks = list(client.follow_logs("j", poll=0.001))
    assert chunks == ["a\n", "b\nc\n", "d"]
    assert dashboard.count("GET", "/api/jobs/j/logs") == 5


def test_follow_logs_restarts_when_the_log_is_replaced(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route(
        "GET", "/api/jobs/j", Reply(body=job("j", "RUNNING")), Reply(body=job("j", "FAILED"))
    )
    dashboard.route(
        "GET", "/api/jobs/j/logs", Reply(body={"logs": "first\n"}), Reply(body={"logs": "new\n"})
    )
    assert list(client.follow_logs("j", poll=0.001)) == ["first\n", "new\n"]


def test_follow_logs_times_out(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j", "RUNNING")))
    dashboard.route("GET", "/api/jobs/j/logs", Reply(body={"logs": "tick\n"}))
    seen: list[str] = []
    with pytest.raises(RayJobTimeout) as info:
        for chunk in client.follow_logs("j", poll=0.01, timeout=0.05):
            seen.append(chunk)
    assert seen == ["tick\n"]
    assert info.value.last_status == "RUNNING"


def test_follow_logs_of_an_unknown_job(client: RayJobClient) -> None:
    with pytest.raises(RayJobNotFound):
        next(client.follow_logs("nope"))


def test_cluster_resources_are_what_ray_reports(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    usage = {"CPU": [1.0, 2.0], "memory": [0.0, 4294967296.0], "node:127.0.0.1": [0.0, 2.0]}
    body = {"result": True, "data": {"clusterStatus": {"loadMetricsReport": {"usage": usage}}}}
    dashboard.route("GET", "/api/cluster_status", Reply(body=body))
    assert client.cluster_resources() == {
        "CPU": (1.0, 2.0),
        "memory": (0.0, 4294967296.0),
        "node:127.0.0.1": (0.0, 2.0),
    }
    empty = {"result": True, "data": {"clusterStatus": {"loadMetricsReport": {"usage": {}}}}}
    dashboard.route("GET", "/api/cluster_status", Reply(body=empty))
    assert client.cluster_resources() == {}
