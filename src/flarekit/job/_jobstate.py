"""Where a training job stands, in one vocabulary for TrainJobs, PyTorchJobs and Ray jobs.

Each backend reports progress differently (Trainer and the training operator through
conditions, Ray through a status string). Users ask one question, "is it running, done or
failed, and why", so each is read into a `JobStatus` with a `JobState`, the reason and the
message the server gave. Reading never fails on a fresh object whose `status` is missing: such
a job is simply `PENDING`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from flarekit._objects import ConditionLike, find_condition
from flarekit._tables import HtmlStatus

C = TypeVar("C", bound=ConditionLike)

__all__ = ["JobState", "JobStatus", "condition_rows", "true_condition"]


class JobState(enum.StrEnum):
    """The life of a training job, whatever runs it."""

    PENDING = "Pending"
    """Created; not running yet (no status, waiting for pods or for its queue)."""
    SUSPENDED = "Suspended"
    """Held (`spec.suspend`), by the user or by Kueue until the queue admits it."""
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    STOPPED = "Stopped"
    """Stopped on request before it finished (Ray jobs)."""

    @property
    def is_terminal(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.STOPPED)


def true_condition(conditions: Iterable[C] | None, type_: str) -> C | None:
    """The condition `type_` if its status is ``"True"`` (None otherwise)."""
    found = find_condition(conditions, type_)
    return found if found is not None and found.status == "True" else None


def condition_rows(conditions: Iterable[ConditionLike] | None) -> tuple[tuple[str, str, str], ...]:
    """(type, status, reason) of each condition, for `JobStatus.conditions`."""
    return tuple(
        (c.type, c.status, str(getattr(c, "reason", None) or "")) for c in conditions or ()
    )


@dataclass(frozen=True)
class JobStatus(HtmlStatus):
    """A job's state, with the server's `reason` and `message` for it.

    `kind` and `name` say which object; `replicas` maps each group of pods (a replicated
    job, a replica type) to counts such as ``{"active": 2, "succeeded": 0}``. `events` holds
    the newest events about the job and its pods, one line each, when the job is pending or
    has failed (the scheduler's or Kueue's word on why it does not run, the pod that failed);
    it is empty otherwise.
    """

    kind: str
    name: str
    namespace: str
    state: JobState
    reason: str = ""
    message: str = ""
    replicas: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    conditions: Sequence[tuple[str, str, str]] = ()
    events: tuple[str, ...] = ()

    @property
    def finished(self) -> bool:
        """The job has ended (succeeded, failed or was stopped); it will not run again by
        itself."""
        return self.state.is_terminal

    @property
    def succeeded(self) -> bool:
        return self.state is JobState.SUCCEEDED

    @property
    def failed(self) -> bool:
        return self.state is JobState.FAILED

    @property
    def summary(self) -> str:
        """One line for progress displays: the state, and the server's reason."""
        return f"{self.state.value} ({self.reason})" if self.reason else self.state.value

    def __str__(self) -> str:
        why = ": ".join(p for p in (self.reason, self.message) if p)
        text = f"{self.kind} {self.namespace}/{self.name}: {self.state.value}"
        text = f"{text} ({why})" if why else text
        return "\n  ".join((text, *self.events))

    def _status_title(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def _status_rows(self) -> Sequence[tuple[str, object]]:
        rows: list[tuple[str, object]] = [("state", self.state.value)]
        if self.reason:
            rows.append(("reason", self.reason))
        if self.message:
            rows.append(("message", self.message))
        for group, counts in self.replicas.items():
            shown = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
            rows.append((group, shown or "-"))
        if self.events:
            rows.append(("events", "\n".join(self.events)))
        return rows
