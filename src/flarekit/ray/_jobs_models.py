"""Typed results of the Ray Jobs REST API: job details, driver info, version.

The models follow the JSON the dashboard returns and keep fields they do not know about
(``extra="allow"``), so a newer Ray that adds fields still parses and nothing it sent is lost:
unknown fields are readable through `model_extra` and come back out of `model_dump`.
"""

from __future__ import annotations

import datetime
import enum

from pydantic import BaseModel, ConfigDict, JsonValue


class RayJobState(enum.StrEnum):
    """Lifecycle of a submitted job, as Ray reports it."""

    PENDING = "PENDING"
    """Accepted; waiting for resources or for its runtime environment to be set up."""
    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    """Stopped on request (`RayJobClient.stop`)."""
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        """True once the job can no longer change status."""
        return self in _TERMINAL


_TERMINAL = frozenset({RayJobState.STOPPED, RayJobState.SUCCEEDED, RayJobState.FAILED})


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class DriverInfo(_Lenient):
    """The driver process of a job: its Ray job id, the node it runs on and its pid."""

    id: str
    node_ip_address: str | None = None
    pid: str | None = None


class JobDetails(_Lenient):
    """One job as the dashboard describes it.

    `submission_id` identifies jobs submitted through the Jobs API; `job_id` is Ray's internal
    driver id, set once a driver has started (and the only id of jobs started by a plain
    ``ray.init`` driver, whose `type` is ``DRIVER``). Times are Unix milliseconds, as Ray sends
    them; `started_at` and `ended_at` give them as aware datetimes.
    """

    status: RayJobState
    entrypoint: str = ""
    type: str | None = None
    submission_id: str | None = None
    job_id: str | None = None
    message: str | None = None
    error_type: str | None = None
    start_time: int | None = None
    end_time: int | None = None
    metadata: dict[str, str] | None = None
    runtime_env: dict[str, JsonValue] | None = None
    driver_info: DriverInfo | None = None
    driver_agent_http_address: str | None = None
    driver_node_id: str | None = None
    driver_exit_code: int | None = None

    @property
    def is_terminal(self) -> bool:
        """True once the job has SUCCEEDED, FAILED or been STOPPED."""
        return self.status.is_terminal

    @property
    def started_at(self) -> datetime.datetime | None:
        return _from_millis(self.start_time)

    @property
    def ended_at(self) -> datetime.datetime | None:
        return _from_millis(self.end_time)


class SubmitRequest(BaseModel):
    """The body of ``POST /api/jobs/``, checked (see `build_submit_request`). Fields left
    None are not sent, so servers that predate a field still accept the body."""

    model_config = ConfigDict(extra="forbid")

    entrypoint: str
    submission_id: str | None = None
    runtime_env: dict[str, JsonValue] | None = None
    metadata: dict[str, str] | None = None
    entrypoint_num_cpus: int | float | None = None
    entrypoint_num_gpus: int | float | None = None
    entrypoint_memory: int | None = None
    entrypoint_resources: dict[str, int | float] | None = None
    entrypoint_label_selector: dict[str, str] | None = None

    def body(self) -> dict[str, JsonValue]:
        """The JSON body, without the fields left None."""
        return self.model_dump(exclude_none=True)


class SubmitAnswer(_Lenient):
    """What ``POST /api/jobs/`` answers: the submission id (``job_id`` before Ray 2.0)."""

    submission_id: str | None = None
    job_id: str | None = None


class LogsAnswer(_Lenient):
    """What ``GET /api/jobs/<id>/logs`` answers: the driver output so far."""

    logs: str


class RayVersion(_Lenient):
    """What ``GET /api/version`` reports: the Jobs API version and the cluster's Ray version."""

    version: str
    ray_version: str
    ray_commit: str | None = None
    session_name: str | None = None


def _from_millis(value: int | None) -> datetime.datetime | None:
    # Ray reports 0 for "not yet", not null, in some versions.
    if not value:
        return None
    return datetime.datetime.fromtimestamp(value / 1000, tz=datetime.UTC)
