"""A notebook widget for jobs: the RayJobs and TrainJobs of a namespace as a table, with Stop,
Resume and Refresh buttons.

Why: a notebook that submits jobs wants to see them and stop one without leaving for a
terminal; the rows are the ones `flarekit job list` prints (`flarekit.job._listing`).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from flarekit.job import ListedJob, RayJob, TrainJob, find_jobs
from flarekit.widgets._common import Confirmed, ListingPanel, ipywidgets, report_errors

if TYPE_CHECKING:
    from flarekit.client import Client

__all__ = ["JobTable", "view_jobs"]

_HEADER = ("NAME", "KIND", "STATE", "QUEUE", "MESSAGE")


class JobTable(ListingPanel):
    """The RayJobs and TrainJobs of a namespace (`ALL_NAMESPACES` for all) as a table, with a
    job chooser and Refresh, Stop (asks for a second click) and Resume buttons.

    `widget` is the ipywidgets box; the object itself displays as that box in Jupyter.
    `jobs` holds the rows last read. Errors of a click show in `message`.
    """

    def __init__(self, namespace: str | None = None, *, client: Client | None = None) -> None:
        super().__init__(namespace, client, "Job")
        w = ipywidgets()
        self.jobs: list[ListedJob] = []
        self.stop_confirm = Confirmed("Stop", self.stop, self.message)
        self.stop_button = self.stop_confirm.button
        self.resume_button = w.Button(description="Resume")
        self.resume_button.on_click(lambda _b: report_errors(self.message, self.resume))
        self.choice.observe(lambda _change: self.stop_confirm.reset(), names="value")
        buttons = w.HBox([self.choice, self.refresh_button, self.stop_button, self.resume_button])
        self._box = w.VBox([self.title, self.table, buttons, self.message])
        self.refresh()

    @property
    def widget(self) -> Any:
        return self._box

    def refresh(self) -> None:
        """Read the jobs again and redraw the table and the chooser."""
        self.jobs = find_jobs(self._connection(), self.namespace)
        every = self.every_namespace
        rows = []
        choices: list[tuple[str, object]] = []
        for job in self.jobs:
            s = job.status
            rows.append(
                (
                    *((s.namespace,) if every else ()),
                    *(s.name, s.kind, s.state.value, job.queue, s.message or s.reason),
                )
            )
            label = f"{s.namespace}/{s.name} ({s.kind})" if every else f"{s.name} ({s.kind})"
            choices.append((label, (s.namespace, s.kind, s.name)))
        self._show("jobs", _HEADER, rows, choices)
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
