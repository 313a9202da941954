"""Finding the RayJobs and TrainJobs that exist in a namespace, with their states.

Why: the command line (`flarekit job list`) and the notebook job table show the same rows, so
they read them in one place. A kind whose API group the cluster does not serve (KubeRay or
Trainer not installed) is skipped; any other 404 is the server's answer and is raised, not
taken for "not installed".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from flarekit._objects import labels_of
from flarekit._products import QUEUE_LABEL
from flarekit.client import NotFound, NotServed, served_versions
from flarekit.job._jobstate import JobStatus
from flarekit.job._rayjob_status import status_of
from flarekit.job._trainjob_read import trainjob_status
from flarekit_models.ray import v1 as ray_v1
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models import KubeResource

__all__ = ["JobKind", "ListedJob", "find_jobs"]

JobKind = Literal["rayjob", "trainjob"]


@dataclass(frozen=True)
class ListedJob:
    """One job as listed: its status, its LocalQueue (if queued by Kueue) and its object."""

    status: JobStatus
    queue: str | None
    resource: KubeResource


def _served(client: Client, kind: type[KubeResource]) -> bool:
    info = kind.resource_info()
    try:
        return info.version in served_versions(client, info.group)
    except NotServed:
        return False


def _list(
    client: Client, kind: type[KubeResource], namespace: str, label_selector: str | None
) -> list[KubeResource]:
    try:
        return list(client.list(kind, namespace=namespace, label_selector=label_selector))
    except NotFound:
        if _served(client, kind):
            raise
        return []  # the operator is not installed


def find_jobs(
    client: Client,
    namespace: str,
    kind: JobKind | None = None,
    label_selector: str | None = None,
) -> list[ListedJob]:
    """Every RayJob and TrainJob in `namespace` (`ALL_NAMESPACES` for all), or those of one
    `kind`, sorted by namespace, name and kind."""
    found: list[ListedJob] = []
    if kind in (None, "rayjob"):
        for ray in _list(client, ray_v1.RayJob, namespace, label_selector):
            assert isinstance(ray, ray_v1.RayJob)
            status = status_of(ray, QUEUE_LABEL)
            found.append(ListedJob(status, status.local_queue, ray))
    if kind in (None, "trainjob"):
        for train in _list(client, trainer_v1alpha1.TrainJob, namespace, label_selector):
            assert isinstance(train, trainer_v1alpha1.TrainJob)
            found.append(
                ListedJob(trainjob_status(train), labels_of(train).get(QUEUE_LABEL), train)
            )
    return sorted(found, key=lambda j: (j.status.namespace, j.status.name, j.status.kind))
