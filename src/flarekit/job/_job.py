"""One shape for every job: what to create (`JobSpec`) and the handle of a submitted job (`Job`).

Why: RayJob, TrainJob, DistributedJob's PyTorchJob and a torchrun job on a running Ray
cluster are run by different operators, but users ask the same things of all of them: where
is it, wait for it, show its output and events, stop it, resume it, delete it. So every
handle has the same methods with the same arguments and return types, and code written for
one kind of job runs unchanged on another (mypy checks each against `Job`).

`KubeJob` implements the shape once for jobs that are a Kubernetes object: a subclass says
which model it is, how its status reads, whose pod holds its log and how it stops.
"""

from __future__ import annotations

import abc
import warnings
from collections.abc import Callable, Collection, Iterator
from typing import (
    TYPE_CHECKING,
    ClassVar,
    Generic,
    Literal,
    Protocol,
    TypeVar,
    overload,
    runtime_checkable,
)

from flarekit.job._jobstate import JobState, JobStatus

if TYPE_CHECKING:
    from flarekit.client._client import Client
    from flarekit_models._base import KubeResource
    from flarekit_models.core.v1 import Event

__all__ = ["Job", "JobError", "JobSpec", "KubeJob", "Until", "wanted_states"]

#: What `wait(until=...)` waits for: one state, or any of several.
Until = JobState | Collection[JobState]
#: The status type a kind of job reports (`JobStatus`, or a subclass with per-kind details).
S = TypeVar("S", bound=JobStatus)


class JobError(Exception):
    """The job cannot do what was asked in its current state, or at all (the message says
    why and what to do instead)."""


@runtime_checkable
class Job(Protocol):
    """A submitted job, whatever runs it."""

    name: str

    def status(self) -> JobStatus:
        """Where the job stands now: the common `JobState`, the server's reason and message,
        and per-kind details (a `RayJobStatus` for a RayJob)."""
        ...

    def wait(
        self,
        until: Until = JobState.SUCCEEDED,
        *,
        timeout: float = 3600.0,
        poll: float = 0.5,
        progress: bool = True,
    ) -> JobStatus:
        """The status once the job is in (one of) `until`; `TerminalFailure` when it ends
        otherwise, `WaitTimeout` after `timeout` seconds."""
        ...

    @overload
    def logs(
        self, *, follow: Literal[False] = False, tail: int | None = None, since: float | None = None
    ) -> str: ...

    @overload
    def logs(
        self, *, follow: Literal[True], tail: int | None = None, since: float | None = None
    ) -> Iterator[str]: ...

    def events(self) -> list[Event]:
        """The Kubernetes events about the job's object, oldest first."""
        ...

    def stop(self) -> JobStatus:
        """Stop the job and keep it (a finished job is left as it is)."""
        ...

    def resume(self) -> JobStatus:
        """Run a stopped job again."""
        ...

    def delete(self, *, wait: bool = False, timeout: float = 300.0) -> bool:
        """Delete the job (False when there was nothing to delete); with `wait`, return
        once it is gone."""
        ...


@runtime_checkable
class JobSpec(Protocol):
    """A description of a job to run; `submit()` sends it and returns its handle."""

    name: str

    def submit(self) -> Job: ...


def wanted_states(until: Until | float) -> frozenset[JobState]:
    """The states `until` names (a bare state, or a collection of them)."""
    if isinstance(until, JobState):
        return frozenset({until})
    if isinstance(until, str | bytes) or not isinstance(until, Collection):
        raise TypeError(
            f"until must be a JobState or a collection of them, got {until!r}; the timeout is "
            "passed as timeout=..."
        )
    states = frozenset(until)
    wrong = [s for s in states if not isinstance(s, JobState)]
    if wrong or not states:
        allowed = ", ".join(f"JobState.{s.name}" for s in JobState)
        raise ValueError(f"until must name JobStates ({allowed}); got {until!r}")
    return states


def timeout_passed_as_until(until: Until | float, timeout: float) -> tuple[Until, float]:
    """Read ``wait(600)`` (the timeout passed first, as before `until` existed) as
    ``wait(timeout=600)``, with a warning."""
    if isinstance(until, int | float) and not isinstance(until, bool):
        warnings.warn(
            "wait(<seconds>) is wait(timeout=<seconds>); the first argument is now `until`",
            FutureWarning,
            stacklevel=4,
        )
        return JobState.SUCCEEDED, float(until)
    if isinstance(until, bool):
        raise TypeError(f"until must be a JobState or a collection of them, got {until!r}")
    return until, timeout


def wait_for_state(
    status: Callable[[], S],
    until: Until,
    subject: str,
    *,
    timeout: float,
    poll: float,
    progress: bool,
    stuck: Callable[[S], str | None] | None = None,
) -> S:
    """Poll `status()` (one request each) until the job is in (one of) `until`; the
    `TerminalFailure` when it ends otherwise (or `stuck` says why it will not move),
    `WaitTimeout` after `timeout` seconds. The shared body of every job's `wait`."""
    from flarekit._wait import wait_until

    until, timeout = timeout_passed_as_until(until, timeout)
    wanted = wanted_states(until)

    def failed(current: S) -> str | None:
        if current.state in wanted:
            return None
        if current.state.is_terminal:
            return current.message or current.reason or current.state.value
        return stuck(current) if stuck is not None else None

    return wait_until(
        status,
        lambda current: current.state in wanted,
        failed,
        timeout=timeout,
        describe=f"{subject} to be {' or '.join(sorted(s.value for s in wanted))}",
        poll=poll,
        progress=progress,
        state=lambda current: current.summary,
    )


class KubeJob(abc.ABC, Generic[S]):
    """A `Job` that is one Kubernetes object (a RayJob, a TrainJob, a PyTorchJob...), whose
    status is an `S`."""

    name: str
    #: How `delete` propagates to what the job made (None: the server's default).
    _propagation: ClassVar[Literal["Foreground", "Background"] | None] = "Foreground"

    # -- what a subclass says -------------------------------------------------------------------

    @abc.abstractmethod
    def _connection(self) -> tuple[Client, str]:
        """The client to use and the namespace the job is in."""

    @abc.abstractmethod
    def _model(self) -> type[KubeResource]:
        """The model class of the job's object, in the version the server serves."""

    @abc.abstractmethod
    def _status_of(self, obj: KubeResource) -> S:
        """The status of the job's object as read."""

    @abc.abstractmethod
    def _log_pod(self) -> tuple[str, str | None]:
        """(pod, container) whose log is the job's output; `LookupError` while there is none."""

    @abc.abstractmethod
    def stop(self) -> S: ...

    @abc.abstractmethod
    def resume(self) -> S: ...

    def _stuck(self, status: S) -> str | None:
        """Why the job will not get anywhere by itself (stopped by the user), or None."""
        return None

    @property
    def _subject(self) -> str:
        return f"{self._model().__name__} {self._connection()[1]}/{self.name}"

    # -- the shape ------------------------------------------------------------------------------

    def _fetch(self) -> KubeResource:
        client, namespace = self._connection()
        return client.get(self._model(), self.name, namespace=namespace)

    def status(self) -> S:
        """Where the job stands now (see `Job.status`)."""
        return self._status_of(self._fetch())

    def wait(
        self,
        until: Until = JobState.SUCCEEDED,
        *,
        timeout: float = 3600.0,
        poll: float = 0.5,
        progress: bool = True,
    ) -> S:
        """The status once the job is in (one of) `until` (default: succeeded).

        Raises `TerminalFailure` quoting the server's message when the job ends in a state
        not in `until` (or is stopped while waiting), `WaitTimeout` after `timeout` seconds.
        Each poll is one GET of the job's object.
        """
        return wait_for_state(
            self.status, until, self._subject, timeout=timeout, poll=poll, progress=progress,
            stuck=self._stuck,
        )  # fmt: skip

    @overload
    def logs(
        self, *, follow: Literal[False] = False, tail: int | None = None, since: float | None = None
    ) -> str: ...

    @overload
    def logs(
        self, *, follow: Literal[True], tail: int | None = None, since: float | None = None
    ) -> Iterator[str]: ...

    def logs(
        self, *, follow: bool = False, tail: int | None = None, since: float | None = None
    ) -> str | Iterator[str]:
        """The job's output: all of it, the last `tail` lines, the lines of the last `since`
        seconds, or (`follow=True`) an iterator of lines as they come until the pod ends."""
        from flarekit.client._pods import read_logs

        client, namespace = self._connection()
        pod, container = self._log_pod()
        return read_logs(
            client,
            namespace,
            pod,
            container=container,
            follow=follow,
            tail=tail,
            since=since,
        )

    def events(self) -> list[Event]:
        """The events about the job's object, oldest first (see `events_about`)."""
        from flarekit.job._events import events_about

        client, namespace = self._connection()
        return events_about(client, namespace, self._model(), self.name)

    def delete(self, *, wait: bool = False, timeout: float = 300.0) -> bool:
        """Delete the job and what it made; False when there was nothing to delete. With
        `wait`, return once the object is gone."""
        from flarekit._wait import wait_until
        from flarekit.client._errors import NotFound

        client, namespace = self._connection()
        try:
            client.delete(
                self._model(), self.name, namespace=namespace, propagation_policy=self._propagation
            )
        except NotFound:
            return False
        if wait:
            wait_until(
                self._gone,
                lambda gone: gone,
                None,
                timeout=timeout,
                describe=f"{self._subject} to be deleted",
                progress=False,
                state=lambda gone: "deleted" if gone else "being deleted",
            )
        return True

    def _gone(self) -> bool:
        from flarekit.client._errors import NotFound

        try:
            self._fetch()
        except NotFound:
            return True
        return False
