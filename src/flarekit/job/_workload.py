"""Stopping and resuming a job that Kueue queues, through its Workload.

Why: Kueue owns ``spec.suspend`` of every job it queues. It creates the job suspended and
clears ``suspend`` when the job's Workload is admitted; a job suspended by hand while its
Workload is admitted is simply started again. The one switch Kueue honours is the Workload's
``spec.active``: ``false`` makes Kueue evict the Workload and suspend the job itself (and keep
it so), ``true`` queues it again. RayJob and TrainJob stop and resume queued jobs this way; jobs
outside any queue are suspended directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import flarekit.kueue
from flarekit._objects import metadata_of, name_of

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models import KubeResource

__all__ = ["set_workload_active"]


def set_workload_active(
    client: Client,
    obj: KubeResource,
    *,
    active: bool,
    subject: str,
    error: type[Exception] = LookupError,
) -> None:
    """Set ``spec.active`` of the Workload Kueue made for `obj` (the job as read from the
    cluster). Raises `error` naming `subject` (e.g. ``"TrainJob ns/name"``) while Kueue has
    not made the Workload yet."""
    workload: KubeResource | None = flarekit.kueue.workload_for(client, obj)
    if workload is None:
        raise error(
            f"{subject} is queued but Kueue has not made its Workload yet; try again in a moment"
        )
    meta = metadata_of(workload)
    client.patch(
        type(workload),
        name_of(workload),
        {"spec": {"active": active}},
        namespace=meta.namespace if meta is not None else None,
    )
