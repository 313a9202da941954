"""A wait that ends early (Ctrl-C or its timeout) leaves its object on the cluster and says
so in its last line, with the command that removes it. Ctrl-C is pressed in a pseudo-terminal
on a real ``flarekit`` process talking to the shared FakeCluster on 127.0.0.1."""

from __future__ import annotations

import shlex

import pytest
from cli_support import flarekit, one_error_line

from flarekit.cli import ExitCode, build_parser
from flarekit_testing import FakeCluster
from kube_support import local_queue, new_namespace
from terminal_support import interrupt_flarekit


@pytest.fixture
def stuck(fake: FakeCluster) -> str:
    """A namespace whose default LocalQueue feeds a ClusterQueue that does not exist: Kueue
    admits nothing queued there, so a wait for it can only be interrupted or time out."""
    name = new_namespace(fake, "stuck")
    local_queue(fake, name, cluster_queue="cq-missing", default=True)
    return name


def _exists(fake: FakeCluster, resource: str, namespace: str) -> bool:
    return fake.get(resource, "held", namespace) is not None


def _removes(fake: FakeCluster, line: str, marker: str) -> list[str]:
    """The command quoted in the line (between backquotes), as flarekit arguments."""
    command = line.split("`")[1]
    words = shlex.split(command)
    assert words[0] == "flarekit" and marker in command, line
    return words[1:]


def test_ctrl_c_during_cluster_apply_wait_names_the_cluster_and_how_to_remove_it(
    fake: FakeCluster, stuck: str
) -> None:
    kubeconfig = str(fake.kubeconfig_path)
    screen = interrupt_flarekit(
        ["cluster", "apply", "held", "--wait", "-n", stuck, "--kubeconfig", kubeconfig],
        ready=lambda shown: "waiting for" in shown and _exists(fake, "rayclusters", stuck),
    )
    assert screen.code == ExitCode.INTERRUPTED, screen
    last = screen.lines[-1]
    assert last == (
        f"error: interrupted; Ray cluster {stuck}/held is left on the cluster: remove it with "
        f"`flarekit cluster down held -n {stuck} --kubeconfig {kubeconfig}`"
    ), screen.lines
    assert fake.get("rayclusters", "held", stuck) is not None  # left, as the line says
    removed = flarekit(None, *_removes(fake, last, "cluster down held"))
    assert removed.code == 0, removed
    assert fake.get("rayclusters", "held", stuck) is None


def test_ctrl_c_during_job_submit_wait_names_the_job_and_how_to_delete_it(
    fake: FakeCluster, stuck: str
) -> None:
    kubeconfig = str(fake.kubeconfig_path)
    screen = interrupt_flarekit(
        ["job", "submit", "held", "--kind", "trainjob", "--wait", "-n", stuck,
         "--kubeconfig", kubeconfig],
        ready=lambda shown: "waiting for" in shown and _exists(fake, "trainjobs", stuck),
    )  # fmt: skip
    assert screen.code == ExitCode.INTERRUPTED, screen
    last = screen.lines[-1]
    assert last == (
        f"error: interrupted; TrainJob {stuck}/held is left on the cluster: remove it with "
        f"`flarekit job delete held --kind trainjob -n {stuck} --kubeconfig {kubeconfig}`"
    ), screen.lines
    assert fake.get("trainjobs", "held", stuck) is not None
    assert flarekit(None, *_removes(fake, last, "job delete held")).code == 0
    assert fake.get("trainjobs", "held", stuck) is None


def test_a_timed_out_cluster_wait_names_what_it_leaves(fake: FakeCluster, stuck: str) -> None:
    result = flarekit(fake, "cluster", "apply", "late", "--wait", "--timeout", "0.2",
                      namespace=stuck)  # fmt: skip
    assert result.code == ExitCode.WAIT_FAILED
    line = one_error_line(result)
    assert line.startswith("error: timed out after "), line
    assert line.endswith(
        f"; Ray cluster {stuck}/late is left on the cluster: remove it with "
        f"`flarekit cluster down late -n {stuck} --kubeconfig {fake.kubeconfig_path}`"
    ), line
    assert flarekit(None, *_removes(fake, line, "cluster down late")).code == 0
    assert fake.get("rayclusters", "late", stuck) is None


def test_a_timed_out_job_wait_names_what_it_leaves(fake: FakeCluster, stuck: str) -> None:
    result = flarekit(fake, "job", "submit", "late", "--kind", "trainjob", "--wait",
                      "--timeout", "0.2", namespace=stuck)  # fmt: skip
    assert result.code == ExitCode.WAIT_FAILED
    line = one_error_line(result)
    assert line.startswith("error: timed out after "), line
    assert line.endswith(
        f"; TrainJob {stuck}/late is left on the cluster: remove it with "
        f"`flarekit job delete late --kind trainjob -n {stuck} "
        f"--kubeconfig {fake.kubeconfig_path}`"
    ), line
    assert flarekit(None, *_removes(fake, line, "job delete late")).code == 0


def test_the_help_documents_the_exit_codes_of_an_ended_wait() -> None:
    shown = " ".join(build_parser().format_help().split())
    assert "130 interrupted" in shown
    assert "naming what it leaves on the cluster and the command that removes it" in shown
