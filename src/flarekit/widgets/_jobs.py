"""A notebook widget for jobs: the RayJobs and TrainJobs of a namespace as a table, with Stop,
Resume and Refresh buttons.

Why: a notebook that submits jobs wants to see them and stop one without leaving for a
terminal; the rows are the ones `flarekit job list` prints (`flarekit.job._listing`).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from flarekit.client._resource import ALL_NAMESPACES
from flarekit.job import RayJob, TrainJob
from flarekit.job._listing import ListedJob, find_jobs
from flarekit.widgets._common import Confirmed, ipywidgets, report_errors, state_table

if TYPE_CHECKING:
    from flarekit.client._client import Client

__all__ = ["JobTable", "view_jobs"]

_HEADER = ("NAME", "KIND", "STATE", "QUEUE", "MESSAGE")


class JobTable:
    """The RayJobs and TrainJobs of a namespace (`ALL_NAMESPACES` for all) as a table, with a
    job chooser and Refresh, Stop (asks for a second click) and Resume buttons.

    `widget` is the ipywidgets box; the object itself displays as that box in Jupyter.
    `jobs` holds the rows last read. Errors of a click show in `message`.
    """

    def __init__(self, namespace: str | None = None, *, client: Client | None = None) -> None:
        w = ipywidgets()
        self._client = client
        self._namespace = namespace
        self.jobs: list[ListedJob] = []
        self.title = w.HTML()
        self.table = w.HTML()
        self.choice = w.Dropdown(description="Job", options=[])
        self.message = w.HTML()
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        self.refresh_button.on_click(lambda _b: report_errors(self.message, self.refresh))
        self.stop_confirm = Confirmed("Stop", self.stop, self.message)
        self.stop_button = self.stop_confirm.button
        self.resume_button = w.Button(description="Resume")
        self.resume_button.on_click(lambda _b: report_errors(self.message, self.resume))
        self.choice.observe(lambda _change: self.stop_confirm.reset(), names="value")
        buttons = w.HBox([self.choice, self.refresh_button, self.stop_button, self.resume_button])
        self.widget = w.VBox([self.title, self.table, buttons, self.message])
        self.refresh()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _connection(self) -> Client:
        if self._client is None:
            from flarekit.client._client import Client

            self._client = Client()
        return self._client

    @property
    def namespace(self) -> str:
        """The namespace listed (the client's when none was given)."""
        return self._namespace or self._connection().namespace or "default"

    def refresh(self) -> None:
        """Read the jobs again and redraw the table and the chooser."""
        self.jobs = find_jobs(self._connection(), self.namespace)
        every = self.namespace == ALL_NAMESPACES
        header = ("NAMESPACE", *_HEADER) if every else _HEADER
        rows = [
            (
                *((j.status.namespace,) if every else ()),
                j.status.name,
                j.status.kind,
                j.status.state.value,
                j.queue,
                j.status.message or j.status.reason,
            )
            for j in self.jobs
        ]
        where = "all namespaces" if every else f"namespace {self.namespace}"
        self.title.value = f"<b>Jobs in {html.escape(where)}: {len(rows)}</b>"
        self.table.value = state_table(
            header, rows, state_column="STATE", empty=f"No jobs in {where}."
        )
        previous = self.choice.value
        keys = [(j.status.namespace, j.status.kind, j.status.name) for j in self.jobs]
        labels = [
            f"{ns}/{name} ({kind})" if every else f"{name} ({kind})" for ns, kind, name in keys
        ]
        self.choice.options = list(zip(labels, keys, strict=True))
        self.choice.value = previous if previous in keys else (keys[0] if keys else None)
        self.stop_confirm.reset()

    def _chosen(self) -> RayJob | TrainJob:
        if not self.choice.value:
            raise LookupError("no job chosen")
        namespace, kind, name = self.choice.value
        client = self._connection()
        if kind == "RayJob":
            return RayJob.from_existing(name, namespace, client=client)
        return TrainJob.from_existing(name, namespace, client=client)

    def stop(self) -> None:
        """Stop the chosen job (see the job's `stop()`) and refresh the table."""
        status = self._chosen().stop()
        self.refresh()
        self.message.value = html.escape(str(status).splitlines()[0])

    def resume(self) -> None:
        """Resume the chosen job (see the job's `resume()`) and refresh the table."""
        status = self._chosen().resume()
        self.refresh()
        self.message.value = html.escape(str(status).splitlines()[0])


def view_jobs(namespace: str | None = None, *, client: Client | None = None) -> JobTable:
    """The job table of `namespace` (see :class:`JobTable`); the last expression of a notebook
    cell shows it."""
    return JobTable(namespace, client=client)
