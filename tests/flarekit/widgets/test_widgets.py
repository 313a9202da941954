"""The notebook widgets, through their widget state: what the table shows, what the buttons
do (a second click to delete or stop), how click errors surface, and live waits."""

from __future__ import annotations

import html
import re
import sys
import time
from typing import Any

import pytest
from widget_support import make_cluster, three_clusters

from flarekit import ALL_NAMESPACES, Client, ClusterConfiguration, NotFound, RayJob, get_cluster
from flarekit._progress import NotebookProgress, open_progress
from flarekit._wait import wait_until
from flarekit.widgets import ClusterButtons, ClusterTable, JobTable, view_clusters, view_jobs
from flarekit_testing import FakeCluster
from wait_support import wait_until as wait_for


def table_rows(page: str) -> list[list[str]]:
    """The text of each body row's cells (tags dropped, entities decoded)."""
    body = page.partition("<tbody>")[2]
    return [
        [
            html.unescape(re.sub(r"<[^>]+>", "", cell))
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def test_cluster_table_shows_each_cluster_with_its_state(client: Client, namespace: str) -> None:
    expected = three_clusters(client, namespace)
    table = view_clusters(namespace, client=client)
    rows = table_rows(table.table.value)
    assert [(r[0], r[1]) for r in rows] == [(n, s.value) for n, s in sorted(expected.items())]
    assert rows[0][2] == "1/1" and rows[2][3] == "waiting"  # workers; gamma's queue
    assert f"namespace {namespace}: 3" in table.title.value
    assert [value for _label, value in table.choice.options] == [
        f"{namespace}/{name}" for name in sorted(expected)
    ]
    # The badge colour follows the state.
    assert "background:#2e7d32" in table.table.value and "background:#c62828" in table.table.value


def test_an_empty_namespace_says_where_it_looked(client: Client, namespace: str) -> None:
    table = ClusterTable(namespace, client=client)
    assert (
        table.table.value
        == f'<p class="flarekit-empty">No Ray clusters in namespace {namespace}.</p>'
    )
    assert table.choice.options == () and table.choice.value is None


def test_refresh_button_reads_the_clusters_again(client: Client, namespace: str) -> None:
    table = ClusterTable(namespace, client=client)
    make_cluster(client, namespace, "late")
    assert table_rows(table.table.value) == []
    table.refresh_button.click()
    assert [r[0] for r in table_rows(table.table.value)] == ["late"]
    assert table.choice.value == f"{namespace}/late"


def test_down_deletes_the_chosen_cluster_on_the_second_click(
    client: Client, namespace: str
) -> None:
    three_clusters(client, namespace)
    table = ClusterTable(namespace, client=client)
    table.choice.value = f"{namespace}/alpha"
    table.down_button.click()
    assert table.down_button.description == "Confirm down"
    assert get_cluster("alpha", namespace, client).status().ready  # not yet deleted
    table.choice.value = f"{namespace}/gamma"  # another row: the confirmation is gone
    assert table.down_button.description == "Down"
    table.choice.value = f"{namespace}/alpha"
    table.down_button.click()
    table.down_button.click()
    assert table.message.value == f"Ray cluster {namespace}/alpha deleted"
    assert [r[0] for r in table_rows(table.table.value)] == ["broken-beta", "gamma"]
    with pytest.raises(NotFound):
        get_cluster("alpha", namespace, client)


def test_a_click_that_fails_says_why_in_the_panel(
    fake: FakeCluster, client: Client, namespace: str
) -> None:
    make_cluster(client, namespace, "gone")
    table = ClusterTable(namespace, client=client)
    fake.delete("rayclusters", "gone", namespace=namespace)  # behind the table's back
    table.details_button.click()
    assert "NotFound" in table.message.value and "gone" in table.message.value


def test_details_button_shows_the_chosen_cluster(client: Client, namespace: str) -> None:
    make_cluster(client, namespace, "alpha")
    table = ClusterTable(namespace, client=client)
    table.details_button.click()
    assert table.message.value == ""
    assert f"{namespace}/alpha" in table.details_view.value and "READY" in table.details_view.value


def test_all_namespaces_adds_the_namespace_column(client: Client, namespace: str) -> None:
    make_cluster(client, namespace, "alpha")
    table = ClusterTable(ALL_NAMESPACES, client=client)
    assert "<th" in table.table.value and ">NAMESPACE</th>" in table.table.value
    assert [namespace, "alpha", "READY"] in [r[:3] for r in table_rows(table.table.value)]
    assert (f"{namespace}/alpha", f"{namespace}/alpha") in table.choice.options


def test_server_text_is_escaped(client: Client, namespace: str) -> None:
    make_cluster(client, namespace, "alpha")
    table = ClusterTable(namespace, client=client)
    assert "<script" not in table.table.value


def job_for(client: Client, namespace: str, name: str) -> RayJob:
    return RayJob(
        name=name,
        namespace=namespace,
        entrypoint="python -c 'print(1)'",
        cluster_config=ClusterConfiguration(name=f"{name}-cluster", num_workers=1),
        client=client,
    )


def test_job_table_stops_and_resumes_a_job(client: Client, namespace: str) -> None:
    job = job_for(client, namespace, "train").submit()
    job.wait("Running", timeout=30, poll=0.01, progress=False)
    table = view_jobs(namespace, client=client)
    assert [r[:3] for r in table_rows(table.table.value)] == [["train", "RayJob", "Running"]]
    assert table.choice.value == (namespace, "RayJob", "train")
    table.stop_button.click()
    assert table.stop_button.description == "Confirm stop"
    assert job.status().state.value == "Running"
    table.stop_button.click()
    assert "RayJob" in table.message.value and "Running" not in table.message.value
    # The operator suspends the job after the click: refresh once it has.
    wait_for(lambda: job.status().state.value != "Running", "the stopped job stopped")
    stopped = _row_and_status_agreeing(table, job)
    assert stopped != "Running"
    table.resume_button.click()
    assert "RayJob" in table.message.value
    wait_for(lambda: job.status().state.value != stopped, "the resumed job left " + stopped)
    assert _row_and_status_agreeing(table, job) != stopped


def _row_and_status_agreeing(table: JobTable, job: RayJob) -> str:
    """The job's state in the refreshed table, from a refresh during which the operator did not
    change it (it moves the job on in the background, so a refresh it raced is repeated)."""
    for _ in range(50):
        before = job.status().state.value
        table.refresh()
        shown = table_rows(table.table.value)[0][2]
        if job.status().state.value == before:
            assert shown == before
            return shown
        time.sleep(0.02)
    raise AssertionError("the job's state changed during every one of 50 refreshes")


def test_job_table_without_jobs(client: Client, namespace: str) -> None:
    table = JobTable(namespace, client=client)
    assert table.table.value == f'<p class="flarekit-empty">No jobs in namespace {namespace}.</p>'
    table.stop_button.click()
    table.stop_button.click()
    assert "no job chosen" in table.message.value


def test_cluster_buttons_apply_waits_live_and_down_deletes(client: Client, namespace: str) -> None:
    from flarekit import Cluster, ClusterConfiguration

    cluster = Cluster(ClusterConfiguration(name="mine", namespace=namespace, num_workers=1), client)
    buttons = ClusterButtons(cluster, timeout=30)
    shown: list[str] = []
    buttons.status.observe(lambda change: shown.append(change["new"]), names="value")
    buttons.apply_button.click()
    assert buttons.message.value == f"Ray cluster {namespace}/mine is ready", buttons.message.value
    assert shown and "waiting for Ray cluster" in shown[0]
    assert shown[-1].endswith("(wait ended)</code>")
    assert "READY" in shown[-1] and "QUEUED" not in shown[-1], shown[-1]  # the final state
    assert "READY" in buttons.details_view.value
    buttons.down_button.click()
    buttons.down_button.click()
    assert buttons.message.value == f"Ray cluster {namespace}/mine deleted"
    assert buttons.details_view.value == ""


def test_cluster_buttons_show_why_apply_failed(client: Client, namespace: str) -> None:
    from flarekit import Cluster, ClusterConfiguration

    config = ClusterConfiguration(name="broken-x", namespace=namespace, num_workers=1)
    buttons = ClusterButtons(Cluster(config, client), timeout=30)
    buttons.apply_button.click()
    assert "TerminalFailure" in buttons.message.value


def test_notebook_progress_shows_every_state_of_a_wait() -> None:
    states = iter(["Pending", "Initializing", "Running 1/2", "Running 2/2"])
    progress = NotebookProgress("the thing")
    seen: list[str] = []
    progress.widget.observe(lambda change: seen.append(change["new"]), names="value")

    class Clock:
        t = 0.0

        def now(self) -> float:
            return self.t

        def sleep(self, seconds: float) -> None:
            self.t += seconds

    wait_until(
        lambda: next(states),
        lambda s: s == "Running 2/2",
        None,
        timeout=60,
        describe="the thing",
        state=str,
        progress=progress,
        clock=Clock(),
    )
    texts = [re.sub(r"<[^>]+>", "", s) for s in seen]
    assert [t.rpartition(": ")[2] for t in texts[:3]] == ["Pending", "Initializing", "Running 1/2"]
    # the last line shows the state the wait ended in, not the one before
    assert texts[-1].endswith("Running 2/2 (wait ended)") and progress.closed


def test_waits_in_a_notebook_show_a_widget(monkeypatch: pytest.MonkeyPatch) -> None:
    import flarekit._progress as progress_module

    displayed: list[Any] = []
    monkeypatch.setattr(progress_module, "in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", displayed.append)
    shown = open_progress("x", timeout=5)
    assert isinstance(shown, NotebookProgress) and displayed == [shown.widget]
    # progress=False still shows nothing; a Progress passed in is used as it is.
    assert not isinstance(open_progress("x", timeout=5, enabled=False), NotebookProgress)
    assert open_progress("x", timeout=5, enabled=shown) is shown


def test_outside_a_kernel_there_is_no_notebook() -> None:
    from flarekit._progress import in_notebook

    assert not in_notebook()


def test_without_ipywidgets_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, client: Client, namespace: str
) -> None:
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    with pytest.raises(ImportError, match=r"pip install 'flarekit\[widgets\]'"):
        ClusterTable(namespace, client=client)
