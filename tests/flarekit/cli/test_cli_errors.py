"""How ``flarekit`` fails: one ``error:`` line on stderr, no traceback, an exit code per kind
of failure, and the traceback only with ``--debug``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import flarekit, one_error_line

from flarekit import ConfigError, NotFound, Problem, WaitTimeout
from flarekit.cli import ExitCode, UsageError, build_parser
from flarekit.cli._exit import classify, one_line
from flarekit.client._errors import Operation
from flarekit_testing import FakeCluster


def _cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
    env |= {"HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "none")}
    return subprocess.run(
        [sys.executable, "-m", "flarekit.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["cluster", "list"], ExitCode.NO_CLUSTER, "no cluster configured"),
        (["cluster", "frobnicate"], ExitCode.USAGE_ERROR, "invalid choice: 'frobnicate'"),
        (["cluster", "apply", "x", "--num-workers", "three"], ExitCode.USAGE_ERROR, "three"),
        (["cluster", "render", "Bad_Name"], ExitCode.VALIDATION_ERROR, "name='Bad_Name'"),
        (["job", "status", "x", "--kind", "cronjob"], ExitCode.USAGE_ERROR, "cronjob"),
        (["cluster"], ExitCode.USAGE_ERROR, "required: ACTION"),
    ],
)
def test_failures_are_one_line_with_their_exit_code(
    tmp_path: Path, argv: list[str], code: ExitCode, words: str
) -> None:
    done = _cli(tmp_path, *argv)
    assert done.returncode == code, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert words in lines[0]
    assert done.stdout == ""


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    done = _cli(tmp_path, "cluster", "list", "--debug")
    assert done.returncode == ExitCode.NO_CLUSTER
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("error: no cluster configured")


def test_unknown_context_is_a_connection_error(fake: FakeCluster) -> None:
    result = flarekit(fake, "cluster", "list", "--context", "nope")
    assert result.code == ExitCode.NO_CLUSTER
    assert "context 'nope' is not defined" in one_error_line(result)


def test_server_errors_are_api_errors(fake: FakeCluster, namespace: str) -> None:
    fake.inject(f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters", status=500, times=10)
    try:
        result = flarekit(fake, "cluster", "list", namespace=namespace)
    finally:
        fake.clear_faults()
    assert result.code == ExitCode.API_ERROR
    assert "500" in one_error_line(result)


def test_a_wait_that_times_out(fake: FakeCluster, namespace: str) -> None:
    result = flarekit(fake, "cluster", "apply", "slowpoke", "--local-queue", "lq", "--wait",
                      "--timeout", "0", namespace=namespace)  # fmt: skip
    assert result.code == ExitCode.WAIT_FAILED
    assert "timed out" in one_error_line(result)
    assert flarekit(fake, "cluster", "down", "slowpoke", namespace=namespace).code == 0


def test_exit_code_of_each_kind_of_exception() -> None:
    problem = Problem("num_workers", -3, "must not be negative", "a whole number >= 0")
    assert classify(ConfigError([problem])) is ExitCode.VALIDATION_ERROR
    assert classify(UsageError("x")) is ExitCode.USAGE_ERROR
    missing = NotFound(Operation("get", "rayclusters.ray.io", "x", "ns"), 404, "NotFound", "gone")
    assert classify(missing) is ExitCode.API_ERROR
    timeout = WaitTimeout(what="x", timeout=1, elapsed=1, last_state="s")
    assert classify(timeout) is ExitCode.WAIT_FAILED
    assert classify(KeyboardInterrupt()) is ExitCode.INTERRUPTED
    assert classify(TypeError("bug")) is ExitCode.INTERNAL_ERROR


def test_messages_become_one_line() -> None:
    problems = [
        Problem("num_workers", -3, "must not be negative", "a whole number >= 0"),
        Problem("worker_memory_requests", "lots", "not a quantity", "e.g. '8Gi'"),
    ]
    text = one_line(ConfigError(problems, "ClusterConfiguration 'x'"))
    assert "\n" not in text
    assert text.startswith("2 problems in ClusterConfiguration 'x': num_workers=-3")
    assert "; worker_memory_requests='lots'" in text
    assert one_line(RuntimeError("")) == "RuntimeError"


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_takes_the_common_options() -> None:
    leaves = {
        "cluster": ["apply", "down", "status", "list", "render"],
        "job": ["submit", "status", "logs", "stop", "delete", "list"],
        "queue": ["list", "status"],
        "version": [],
    }
    groups = _choices(build_parser())
    # dev starts and stops the practice cluster, completion prints shell code: no kubeconfig,
    # namespace or output to choose
    assert set(groups) == set(leaves) | {"dev", "completion", "ray"}
    ray_jobs = _choices(_choices(groups["ray"])["job"])
    assert set(ray_jobs) == {"submit", "status", "logs", "list", "stop", "delete"}
    for group, actions in [*leaves.items(), ("ray", list(ray_jobs))]:
        parent = _choices(groups["ray"])["job"] if group == "ray" else groups[group]
        commands = [_choices(parent)[a] for a in actions] or [groups[group]]
        for command in commands:
            options = {o for action in command._actions for o in action.option_strings}
            common = {"--namespace", "--context", "--kubeconfig", "--output", "--debug"}
            assert common <= options, command.prog
