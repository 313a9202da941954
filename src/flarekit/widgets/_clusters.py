"""Notebook widgets for Ray clusters: a table of the clusters in a namespace, and apply/down
buttons for one cluster.

Why: codeflare-sdk's users manage clusters from notebooks with `view_clusters()` (a table with
refresh and delete buttons) and apply/down buttons under a configuration; these are flarekit's
equivalents, built on the same facade calls as the rest (`list_all_clusters`, `Cluster.down`,
`Cluster.apply`, `Cluster.wait_ready`).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from flarekit._progress import NotebookProgress
from flarekit.cluster import Cluster, get_cluster, list_all_clusters
from flarekit.widgets._common import Confirmed, ListingPanel, ipywidgets, report_errors

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit.cluster import ClusterStatus

__all__ = ["ClusterButtons", "ClusterTable", "view_clusters"]

_HEADER = ("NAME", "STATE", "WORKERS", "QUEUE", "APPWRAPPER", "REASON")


class ClusterTable(ListingPanel):
    """The Ray clusters of a namespace (`ALL_NAMESPACES` for all) as a table, with a cluster
    chooser and Refresh, Details and Down buttons (Down asks for a second click).

    `widget` is the ipywidgets box; the object itself displays as that box in Jupyter.
    `statuses` holds the rows last read. Errors of a click show in `message`.
    """

    def __init__(self, namespace: str | None = None, *, client: Client | None = None) -> None:
        super().__init__(namespace, client, "Cluster")
        w = ipywidgets()
        self.statuses: list[ClusterStatus] = []
        self.details_view = w.HTML()
        self.details_button = w.Button(description="Details")
        self.details_button.on_click(lambda _b: report_errors(self.message, self.show_details))
        self.down_confirm = Confirmed("Down", self.down, self.message)
        self.down_button = self.down_confirm.button
        self.choice.observe(lambda _change: self.down_confirm.reset(), names="value")
        buttons = w.HBox([self.choice, self.refresh_button, self.details_button, self.down_button])
        self._box = w.VBox([self.title, self.table, buttons, self.message, self.details_view])
        self.refresh()

    @property
    def widget(self) -> Any:
        return self._box

    def refresh(self) -> None:
        """Read the clusters again and redraw the table and the chooser."""
        self.statuses = list(list_all_clusters(self.namespace, self._connection()))
        every = self.every_namespace
        rows = [
            (
                *((s.namespace,) if every else ()),
                *(s.name, s.state.value, s.workers, s.queue, s.appwrapper, s.reason),
            )
            for s in self.statuses
        ]
        choices = [
            (f"{s.namespace}/{s.name}" if every else s.name, f"{s.namespace}/{s.name}")
            for s in self.statuses
        ]
        self._show("Ray clusters", _HEADER, rows, choices)
        self.down_confirm.reset()

    def _chosen(self) -> Cluster:
        if not self.choice.value:
            raise LookupError("no cluster chosen")
        namespace, _, name = str(self.choice.value).partition("/")
        return get_cluster(name, namespace, self._connection())

    def show_details(self) -> None:
        """Show the chosen cluster's details (status, addresses, groups) under the table."""
        self.details_view.value = self._chosen().details()._repr_html_()

    def down(self) -> None:
        """Delete the chosen cluster (its AppWrapper when wrapped) and refresh the table."""
        cluster = self._chosen()
        deleted = cluster.down()
        what = f"Ray cluster {cluster.namespace}/{cluster.name}"
        self.refresh()
        self.message.value = html.escape(
            f"{what} deleted" if deleted else f"{what} was already gone"
        )


def view_clusters(namespace: str | None = None, *, client: Client | None = None) -> ClusterTable:
    """The cluster table of `namespace` (see :class:`ClusterTable`); the last expression of a
    notebook cell shows it."""
    return ClusterTable(namespace, client=client)


class ClusterButtons:
    """Apply and Down buttons for one cluster, with a "wait until ready" box whose wait shows
    live in the panel (state, workers ready, time left), then the cluster's details."""

    def __init__(self, cluster: Cluster, *, timeout: float = 600.0) -> None:
        w = ipywidgets()
        self.cluster = cluster
        self.timeout = timeout
        self.message = w.HTML()
        self.apply_button = w.Button(description="Apply", button_style="success")
        self.apply_button.on_click(lambda _b: report_errors(self.message, self.apply))
        self.wait_box = w.Checkbox(value=True, description="Wait until ready")
        self.status = w.HTML()
        self.details_view = w.HTML()
        self.down_confirm = Confirmed("Down", self.down, self.message)
        self.down_button = self.down_confirm.button
        controls = w.HBox([self.apply_button, self.down_button, self.wait_box])
        self.widget = w.VBox([controls, self.status, self.message, self.details_view])

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def apply(self) -> None:
        """Apply the cluster; with the box ticked, wait until it is ready, showing the wait."""
        what = f"Ray cluster {self.cluster.namespace}/{self.cluster.name}"
        self.message.value = ""
        self.cluster.apply()
        self.message.value = html.escape(f"{what} applied")
        if self.wait_box.value:
            progress = NotebookProgress(what + " to be ready", widget=self.status)
            self.cluster.wait_ready(self.timeout, progress=progress)
            self.message.value = html.escape(f"{what} is ready")
        self.details_view.value = self.cluster.details()._repr_html_()

    def down(self) -> None:
        """Delete the cluster."""
        what = f"Ray cluster {self.cluster.namespace}/{self.cluster.name}"
        deleted = self.cluster.down()
        self.details_view.value = ""
        self.message.value = html.escape(
            f"{what} deleted" if deleted else f"{what} was already gone"
        )
