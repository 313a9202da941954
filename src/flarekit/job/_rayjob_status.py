"""What a RayJob reports, as one typed value that never trips over a missing field.

KubeRay writes two states on a RayJob: ``jobDeploymentStatus`` (what the operator is doing:
Initializing the cluster, Running the submitter, Complete, Failed, Suspended, ...) and
``jobStatus`` (what Ray says about the job itself: PENDING, RUNNING, SUCCEEDED, FAILED,
STOPPED). A fresh RayJob has neither, and older operators leave some fields out, so every
field here may be ``None``; the properties answer the questions users ask ("is it over?",
"did it work?") from whichever fields are present.

KubeRay v1.1 ends a job whose Ray job failed as ``Complete`` with ``jobStatus: FAILED``;
v1.2 and later say ``Failed`` with ``reason: AppFailed``. Both read as :attr:`failed`.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flarekit.job._jobstate import JobState, JobStatus
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit_models.ray.v1 import RayJob

__all__ = [
    "DEPLOYMENT_FAILED",
    "DEPLOYMENT_FINISHED",
    "RAY_JOB_FAILED",
    "RayJobStatus",
    "status_of",
]

#: ``jobDeploymentStatus`` values after which KubeRay does nothing more with the job.
DEPLOYMENT_FINISHED = frozenset({"Complete", "Failed", "ValidationFailed"})
#: ``jobDeploymentStatus`` values that mean the job did not succeed.
DEPLOYMENT_FAILED = frozenset({"Failed", "ValidationFailed"})
#: Ray's ``jobStatus`` values that mean the Ray job did not succeed.
RAY_JOB_FAILED = frozenset({"FAILED", "STOPPED"})


def _time(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value)
    except ValueError:
        return None


def _text(value: str | None) -> str | None:
    return value or None


@dataclass(frozen=True)
class RayJobStatus(JobStatus):
    """A RayJob's `JobStatus`, with KubeRay's own fields as its per-kind details; any of them
    may be ``None`` (not reported).

    * ``deployment_status``: KubeRay's ``jobDeploymentStatus`` (``Initializing``,
      ``Running``, ``Complete``, ``Failed``, ``Suspending``, ``Suspended``, ``Retrying``,
      ``Waiting``, ``ValidationFailed``; ``None`` before the operator has looked at it).
    * ``job_status``: Ray's own job status (``PENDING``, ``RUNNING``, ``SUCCEEDED``,
      ``FAILED``, ``STOPPED``).
    * ``reason`` / ``message`` (common fields): why it failed, as KubeRay wrote it.
    * ``start_time`` / ``end_time``; ``dashboard_url`` (the Ray dashboard inside the
      cluster); ``cluster_name`` (the RayCluster the job runs on); ``job_id`` (Ray's
      submission id, for :class:`flarekit.ray.RayJobClient`).
    * ``suspended``: ``spec.suspend`` is set (by :meth:`RayJob.stop` or by Kueue while the
      job waits for admission); ``local_queue``: the Kueue LocalQueue it was sent to.
    """

    deployment_status: str | None = None
    job_status: str | None = None
    start_time: datetime.datetime | None = None
    end_time: datetime.datetime | None = None
    dashboard_url: str | None = None
    cluster_name: str | None = None
    job_id: str | None = None
    suspended: bool = False
    local_queue: str | None = None

    @property
    def finished(self) -> bool:
        """KubeRay is done with the job (it succeeded or failed; it will not run again)."""
        return self.deployment_status in DEPLOYMENT_FINISHED

    @property
    def failed(self) -> bool:
        """The job ended without success (deployment failed, or Ray's job failed or stopped)."""
        return self.deployment_status in DEPLOYMENT_FAILED or (
            self.finished and self.job_status in RAY_JOB_FAILED
        )

    @property
    def succeeded(self) -> bool:
        """The job ended and Ray reports it succeeded."""
        return self.finished and not self.failed and self.job_status in (None, "SUCCEEDED")

    @property
    def failure_reason(self) -> str | None:
        """The server's words for a failure (its message, else its reason, else the states),
        or ``None`` while the job has not failed."""
        if not self.failed:
            return None
        if self.message:
            return self.message
        parts = [
            f"reason {self.reason}" if self.reason else "",
            f"jobDeploymentStatus {self.deployment_status}" if self.deployment_status else "",
            f"jobStatus {self.job_status}" if self.job_status else "",
        ]
        return ", ".join(p for p in parts if p)

    @property
    def summary(self) -> str:
        """A one-line summary for progress displays: ``Running (RUNNING)``, ``queued``, ..."""
        if self.deployment_status is None:
            return "suspended (waiting for Kueue)" if self.suspended else "not started yet"
        text = self.deployment_status
        if self.job_status:
            text += f" ({self.job_status})"
        if self.message and self.failed:
            text += f": {self.message}"
        return text

    def _status_title(self) -> str:
        return f"RayJob {self.namespace}/{self.name}"

    def _status_rows(self) -> Sequence[tuple[str, object]]:
        return [
            ("state", self.state.value),
            ("deployment", self.deployment_status),
            ("Ray job", self.job_status),
            ("message", self.message),
            ("started", self.start_time),
            ("ended", self.end_time),
            ("cluster", self.cluster_name),
            ("dashboard", self.dashboard_url),
            ("queue", self.local_queue),
            ("suspended", self.suspended),
        ]

    def __str__(self) -> str:
        return self.as_table()


def _state(deployment: str | None, job: str | None, suspended: bool) -> JobState:
    """KubeRay's two states as the common `JobState`."""
    if deployment in DEPLOYMENT_FAILED:
        return JobState.FAILED
    if deployment in DEPLOYMENT_FINISHED:
        if job == "STOPPED":
            return JobState.STOPPED
        return JobState.FAILED if job in RAY_JOB_FAILED else JobState.SUCCEEDED
    if deployment in ("Suspended", "Suspending") or (deployment is None and suspended):
        return JobState.SUSPENDED
    if deployment == "Running" or job == "RUNNING":
        return JobState.RUNNING
    return JobState.PENDING


def status_of(obj: RayJob, queue_label: str) -> RayJobStatus:
    """The :class:`RayJobStatus` of a ``flarekit_models.ray.v1.RayJob`` (status optional)."""
    meta, spec = obj.metadata, obj.spec
    status = obj.status if obj.status is not None else ray_v1.RayJobStatus()
    labels = dict(meta.labels or {}) if meta is not None else {}
    deployment, job = _text(status.job_deployment_status), _text(status.job_status)
    suspended = bool(spec is not None and spec.suspend)
    return RayJobStatus(
        kind="RayJob",
        name=(meta.name if meta is not None else None) or "",
        namespace=(meta.namespace if meta is not None else None) or "",
        state=_state(deployment, job, suspended),
        reason=_text(status.reason) or "",
        message=_text(status.message) or "",
        deployment_status=deployment,
        job_status=job,
        start_time=_time(status.start_time),
        end_time=_time(status.end_time),
        dashboard_url=_text(status.dashboard_url),
        cluster_name=_text(status.ray_cluster_name),
        job_id=_text(status.job_id),
        suspended=suspended,
        local_queue=_text(labels.get(queue_label)),
    )
