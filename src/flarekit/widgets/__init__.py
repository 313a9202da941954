"""Notebook widgets (the ``widgets`` extra: ``pip install 'flarekit[widgets]'``).

    from flarekit.widgets import view_clusters, view_jobs, ClusterButtons

    view_clusters("team-a")          # the clusters, with Refresh, Details and Down
    view_jobs("team-a")              # the jobs, with Refresh, Stop and Resume
    ClusterButtons(cluster)          # Apply (optionally waiting, live) and Down for one cluster

Each is an object holding ipywidgets (`widget`) that Jupyter shows as the widget when it is the
last expression of a cell. Waits started anywhere in a notebook (`cluster.wait_ready()`,
`job.wait()`) show a live status line when ipywidgets is installed.
"""

from __future__ import annotations

from flarekit.widgets._clusters import ClusterButtons, ClusterTable, view_clusters
from flarekit.widgets._jobs import JobTable, view_jobs

__all__ = ["ClusterButtons", "ClusterTable", "JobTable", "view_clusters", "view_jobs"]
