"""``flarekit ray job ...`` against a scripted dashboard on 127.0.0.1: what each command sends
and prints, its exit codes, and that usage and parameter errors come before any request.
(The same commands run against a real Ray head in integration_inner.py.)"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_dashboard import FakeDashboard, Reply, job

from flarekit import Client, Cluster, ClusterConfiguration, from_kubeconfig
from flarekit.cli import _ray, main
from flarekit_testing import FakeCluster, RayClusterController
from terminal_support import interrupt_flarekit


@dataclass
class Run:
    code: int
    out: str
    err: str


def flarekit(*argv: str) -> Run:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Poll the scripted dashboard without waiting, and ignore the user's RAY_ADDRESS."""
    monkeypatch.setattr(_ray, "_POLL", 0.01)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def one_error(run: Run) -> str:
    lines = run.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run
    return lines[0]


def test_submit_sends_the_job_follows_its_output_and_ends_with_its_status(
    dashboard: FakeDashboard,
) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(body={"submission_id": "train-1"}))
    dashboard.route(
        "GET",
        "/api/jobs/train-1",
        Reply(body=job("train-1")),
        Reply(body=job("train-1", "SUCCEEDED")),
    )
    dashboard.route(
        "GET",
        "/api/jobs/train-1/logs",
        Reply(body={"logs": "epoch 1\nepo"}),
        Reply(body={"logs": "epoch 1\nepoch 2\n"}),
    )
    run = flarekit(
        "ray", "job", "submit", "--address", dashboard.url, "--submission-id", "train-1",
        "--env", "EPOCHS=2", "--metadata", "owner=me", "--entrypoint-num-cpus", "1",
        "--", "python", "-c", "print('hi there')",
    )  # fmt: skip
    assert run.code == 0, run
    assert run.out == (
        f"Ray job train-1 submitted to {dashboard.url}\n"
        "epoch 1\nepoch 2\n"
        "Ray job train-1: SUCCEEDED\n"
    )
    [posted] = [r for r in dashboard.requests if r.method == "POST"]
    assert posted.json() == {
        "entrypoint": "python -c 'print('\"'\"'hi there'\"'\"')'",  # quoted as it was given
        "submission_id": "train-1",
        "runtime_env": {"env_vars": {"EPOCHS": "2"}},
        "metadata": {"owner": "me"},
        "entrypoint_num_cpus": 1.0,
    }


def test_one_word_after_the_separator_is_a_shell_command_line(dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(body={"submission_id": "s"}))
    dashboard.route("GET", "/api/jobs/s", Reply(body=job("s", "PENDING")))
    run = flarekit(
        "ray", "job", "submit", "--address", dashboard.url, "--no-wait", "-o", "name",
        "--", "python a.py && echo done",
    )  # fmt: skip
    assert run.code == 0, run
    assert run.out == "s\n"
    assert dashboard.requests[0].json() == {"entrypoint": "python a.py && echo done"}


def test_a_job_that_fails_while_submit_follows_it_exits_5(dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(body={"submission_id": "bad"}))
    failed = job("bad", "FAILED", message="Job entrypoint command failed with exit code 3")
    dashboard.route("GET", "/api/jobs/bad", Reply(body=failed))
    dashboard.route("GET", "/api/jobs/bad/logs", Reply(body={"logs": "boom\n"}))
    run = flarekit("ray", "job", "submit", "--address", dashboard.url, "--", "false")
    assert run.code == 5, run
    assert "boom\n" in run.out
    assert one_error(run) == (
        "error: Ray job bad ended FAILED: Job entrypoint command failed with exit code 3"
    )


def test_submit_with_json_output_waits_and_prints_the_details(dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(body={"submission_id": "j"}))
    done = job("j", "SUCCEEDED", new_field_from_newer_ray={"x": 1})
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j")), Reply(body=done))
    run = flarekit("ray", "job", "submit", "--address", dashboard.url, "-o", "json", "--", "true")
    assert run.code == 0, run
    shown = json.loads(run.out)
    assert shown["status"] == "SUCCEEDED" and shown["submission_id"] == "j"
    assert shown["new_field_from_newer_ray"] == {"x": 1}  # what flarekit does not know is kept
    assert dashboard.count("GET", "/api/jobs/j/logs") == 0  # no output mixed into the JSON


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["submit", "--", "true"], 2, "which Ray dashboard?"),
        (["submit", "--address", "{url}", "--cluster", "c", "--", "true"], 2, "not both"),
        (["list", "--address", "{url}", "-n", "team-a"], 2, "-n/--namespace"),
        (["submit", "--address", "{url}"], 2, "give the job's command after --"),
        (["submit", "--address", "{url}", "--timeout", "0", "--", "x"], 2, "more than 0"),
        (["submit", "--address", "{url}", "--runtime-env-json", "[1]", "--", "x"], 2, "object"),
        (["submit", "--address", "{url}", "--header", "nocolon", "--", "x"], 2, "Name: value"),
        (["logs", "j", "--address", "{url}", "--tail", "-1"], 2, "0 or more"),
        (
            [
                "list",
                "--address",
                "{url}",
                "--insecure-skip-tls-verify",
                "--certificate-authority",
                "c",
            ],
            2,
            "exclude each other",
        ),
        (["list", "--address", "ftp://host"], 3, "must start with http:// or https://"),
        (
            ["submit", "--address", "{url}", "--entrypoint-num-cpus", "-1", "--", "x"],
            3,
            "entrypoint_num_cpus",
        ),
        (["status", "no spaces", "--address", "{url}"], 3, "SUBMISSION_ID"),
    ],
)
def test_usage_and_parameter_errors_come_before_any_request(
    dashboard: FakeDashboard, argv: list[str], code: int, message: str
) -> None:
    run = flarekit("ray", "job", *[a.replace("{url}", dashboard.url) for a in argv])
    assert run.code == code, run
    assert message in one_error(run)
    assert dashboard.requests == []


def test_list_in_every_output_format(dashboard: FakeDashboard) -> None:
    jobs = [
        job("b", "RUNNING", start_time=2000, entrypoint="python " + "x" * 80),
        job("a", "SUCCEEDED", start_time=1000, message="Job finished successfully."),
    ]
    dashboard.route("GET", "/api/jobs/", Reply(body=jobs))
    table = flarekit("ray", "job", "list", "--address", dashboard.url)
    assert table.code == 0, table
    lines = table.out.splitlines()
    assert lines[0] == f"Ray jobs at {dashboard.url}: 2"
    assert lines[1].split() == ["SUBMISSION", "ID", "TYPE", "STATUS", "ENTRYPOINT"]
    assert lines[3].split()[:3] == ["a", "SUBMISSION", "SUCCEEDED"]  # oldest first
    assert lines[4].endswith("...")  # long entrypoints are cut in the table
    wide = flarekit("ray", "job", "list", "--address", dashboard.url, "-o", "wide")
    assert "Job finished successfully." in wide.out and "x" * 80 in wide.out
    names = flarekit("ray", "job", "list", "--address", dashboard.url, "-o", "name")
    assert names.out == "a\nb\n"
    listed = json.loads(
        flarekit("ray", "job", "list", "--address", dashboard.url, "-o", "json").out
    )
    assert [j["submission_id"] for j in listed] == ["a", "b"]


def test_an_empty_list_says_where_it_looked(dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/", Reply(body=[]))
    run = flarekit("ray", "job", "list", "--address", dashboard.url)
    assert run.out == f"Ray jobs at {dashboard.url}: 0\n"


def test_logs_tail_and_follow(dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/j/logs", Reply(body={"logs": "one\ntwo\nthree\n"}))
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j", "SUCCEEDED")))
    tail = flarekit("ray", "job", "logs", "j", "--address", dashboard.url, "--tail", "2")
    assert (tail.code, tail.out) == (0, "two\nthree\n")
    followed = flarekit("ray", "job", "logs", "j", "--address", dashboard.url, "-f")
    assert (followed.code, followed.out) == (0, "one\ntwo\nthree\n")


def test_stop_waits_until_ray_reports_the_job_stopped(dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/j/stop", Reply(body={"stopped": True}))
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j")), Reply(body=job("j", "STOPPED")))
    run = flarekit("ray", "job", "stop", "j", "--address", dashboard.url)
    assert (run.code, run.out) == (0, "Ray job j: STOPPED\n")
    assert dashboard.count("GET", "/api/jobs/j") == 2


def test_stopping_a_finished_job_says_so(dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/j/stop", Reply(body={"stopped": False}))
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j", "SUCCEEDED")))
    run = flarekit("ray", "job", "stop", "j", "--address", dashboard.url)
    assert (run.code, run.out) == (0, "Ray job j: SUCCEEDED (it had already ended)\n")


def test_a_stop_that_never_completes_times_out_with_exit_5(dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/j/stop", Reply(body={"stopped": True}))
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j")))
    run = flarekit("ray", "job", "stop", "j", "--address", dashboard.url, "--timeout", "0.3")
    assert run.code == 5, run
    assert "Ray job j to stop" in one_error(run) and "RUNNING" in run.err


def test_status_delete_headers_and_ray_address(
    dashboard: FakeDashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_ADDRESS", dashboard.url)
    dashboard.route("GET", "/api/jobs/j", Reply(body=job("j", "SUCCEEDED")))
    dashboard.route("DELETE", "/api/jobs/j", Reply(body={"deleted": True}))
    status = flarekit("ray", "job", "status", "j", "--header", "Authorization: Bearer t0k")
    assert status.code == 0, status
    assert status.out.splitlines()[0] == "Ray job j"
    assert "SUCCEEDED" in status.out and "python train.py" in status.out
    assert dashboard.requests[0].headers["Authorization"] == "Bearer t0k"
    deleted = flarekit("ray", "job", "delete", "j", "-o", "name")
    assert (deleted.code, deleted.out) == (0, "j\n")


def test_an_unknown_job_is_an_api_error(dashboard: FakeDashboard) -> None:
    run = flarekit("ray", "job", "status", "nope", "--address", dashboard.url)
    assert run.code == 1 and "nope" in one_error(run)


def test_an_unreachable_dashboard_is_an_api_error() -> None:
    run = flarekit("ray", "job", "list", "--address", "http://127.0.0.1:9")
    assert run.code == 1, run
    assert "Ray dashboard at http://127.0.0.1:9 is unavailable" in one_error(run)


# -- the dashboard of a Ray cluster on Kubernetes ------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeCluster]:
    with FakeCluster(
        releases={"kuberay": "v1.7.0"},
        tick_interval=0.02,
        controllers=[RayClusterController()],
    ) as fc:
        yield fc


@pytest.fixture(scope="module")
def cluster(fake: FakeCluster) -> Iterator[Cluster]:
    kube = Client(from_kubeconfig(fake.kubeconfig_path))
    made = Cluster(ClusterConfiguration(name="ray", namespace="default", num_workers=1), kube)
    made.apply()
    yield made
    made.down()


def test_cluster_names_the_dashboard_to_use(
    fake: FakeCluster,
    cluster: Cluster,
    dashboard: FakeDashboard,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Finding the URL from a Route/Ingress/HTTPRoute is tested with Cluster itself; here the
    # URL it finds is the scripted dashboard's.
    monkeypatch.setattr(Cluster, "cluster_dashboard_uri", lambda self: dashboard.url)
    dashboard.route("GET", "/api/jobs/", Reply(body=[job("j", "RUNNING")]))
    kube = ["--kubeconfig", str(fake.kubeconfig_path), "-n", "default"]
    run = flarekit("ray", "job", "list", "--cluster", "ray", *kube, "-o", "name")
    assert (run.code, run.out) == (0, "j\n")


def test_a_cluster_whose_dashboard_is_not_exposed_says_how_to_reach_it(
    fake: FakeCluster, cluster: Cluster
) -> None:
    kube = ["--kubeconfig", str(fake.kubeconfig_path), "-n", "default"]
    run = flarekit("ray", "job", "list", "--cluster", "ray", *kube)
    assert run.code == 1, run
    assert "kubectl port-forward -n default svc/" in one_error(run)


def test_a_missing_cluster_is_an_api_error(fake: FakeCluster) -> None:
    kube = ["--kubeconfig", str(fake.kubeconfig_path), "-n", "default"]
    run = flarekit("ray", "job", "list", "--cluster", "missing", *kube)
    assert run.code == 1, run
    assert "missing" in one_error(run)


def test_runtime_env_from_a_file_json_and_flags_merges_in_that_order(
    dashboard: FakeDashboard, tmp_path: Path
) -> None:
    env_file = tmp_path / "env.yaml"
    env_file.write_text("pip: [requests]\nenv_vars: {A: from-file, B: from-file}\n")
    dashboard.route("POST", "/api/jobs/", Reply(body={"submission_id": "s"}))
    dashboard.route("GET", "/api/jobs/s", Reply(body=job("s", "PENDING")))
    run = flarekit(
        "ray", "job", "submit", "--address", dashboard.url, "--no-wait",
        "--runtime-env", str(env_file), "--runtime-env-json", '{"config": {"setup_timeout_seconds": 60}}',
        "--env", "B=from-flag", "--", "true",
    )  # fmt: skip
    assert run.code == 0, run
    assert dashboard.requests[0].json()["runtime_env"] == {
        "pip": ["requests"],
        "env_vars": {"A": "from-file", "B": "from-flag"},
        "config": {"setup_timeout_seconds": 60},
    }


def _running_forever(dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(body={"submission_id": "train-1"}))
    dashboard.route("GET", "/api/jobs/train-1", Reply(body=job("train-1")))
    dashboard.route("GET", "/api/jobs/train-1/logs", Reply(body={"logs": "epoch 1\n"}))


def test_a_submit_that_times_out_says_the_job_keeps_running_and_how_to_stop_it(
    dashboard: FakeDashboard,
) -> None:
    _running_forever(dashboard)
    run = flarekit("ray", "job", "submit", "--address", dashboard.url, "--timeout", "0.2",
                   "--", "python", "train.py")  # fmt: skip
    assert run.code == 5, run
    assert one_error(run) == (
        "error: timed out after 0.2s (last status: RUNNING); Ray job train-1 keeps running on "
        f"the cluster: stop it with `flarekit ray job stop train-1 --address {dashboard.url}`"
    )


def test_ctrl_c_during_submit_says_the_job_keeps_running_and_how_to_stop_it(
    dashboard: FakeDashboard,
) -> None:
    """Ctrl-C in a terminal, on a real ``flarekit`` process following the job's output."""
    _running_forever(dashboard)
    screen = interrupt_flarekit(
        ["ray", "job", "submit", "--address", dashboard.url, "--", "python", "train.py"],
        ready=lambda shown: "epoch 1" in shown,
    )
    assert screen.code == 130, screen
    assert screen.lines[-1] == (
        "error: interrupted; Ray job train-1 keeps running on the cluster: stop it with "
        f"`flarekit ray job stop train-1 --address {dashboard.url}`"
    ), screen.lines
    assert dashboard.count("POST", "/api/jobs/train-1/stop") == 0  # left running, as it says
