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
import dataclasses
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
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

import flarekit.client
from flarekit._events import event_line, events_about, pod_names
from flarekit._wait import TerminalFailure, wait_until
from flarekit.job._jobstate import JobState, JobStatus
from flarekit.job._merged_logs import follow_all_nodes, job_pods, node_rank

if TYPE_CHECKING:
    from flarekit._progress import Progress
    from flarekit.client import Client
    from flarekit_models import KubeResource
    from flarekit_models.core.v1 import Event

__all__ = [
    "WAIT_FOR_POD",
    "Job",
    "JobError",
    "JobSpec",
    "KubeJob",
    "NoPodYet",
    "Until",
    "wanted_states",
]

#: What `wait(until=...)` waits for: one state or any of several, as `JobState`s or their
#: names (``"Running"``, ``{"Succeeded", "Failed"}``).
Until = JobState | str | Collection[JobState | str]
#: The status type a kind of job reports (`JobStatus`, or a subclass with per-kind details).
S = TypeVar("S", bound=JobStatus)
#: What `wait(callback=...)` is called with on every status read.
Callback = Callable[[S], object]
#: How long `logs(follow=True)` waits for a queued job's first pod (seconds): as long as a
#: queue may hold a job, while the job has not ended.
WAIT_FOR_POD = 24 * 3600.0
#: States in which `status()` also reads the events (something is pending or has failed).
_EVENT_STATES = frozenset({JobState.PENDING, JobState.FAILED})
#: How many events `status()` shows (the newest).
_SHOWN_EVENTS = 5


class JobError(Exception):
    """The job cannot do what was asked in its current state, or at all (the message says
    why and what to do instead)."""


class NoPodYet(JobError, LookupError):
    """The job has no pod to read a log from yet (it is queued, or its operator has not made
    the pod); `logs(follow=True)` waits for it instead of raising."""


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
        progress: bool | Progress = True,
        callback: Callable[[JobStatus], object] | None = None,
    ) -> JobStatus:
        """The status once the job is in (one of) `until`; `TerminalFailure` when it ends
        otherwise, `WaitTimeout` after `timeout` seconds. `callback` is called with every
        status read while waiting."""
        ...

    @overload
    def logs(
        self,
        *,
        follow: Literal[False] = False,
        tail: int | None = None,
        since: float | None = None,
        all_nodes: bool = False,
    ) -> str: ...

    @overload
    def logs(
        self,
        *,
        follow: Literal[True],
        tail: int | None = None,
        since: float | None = None,
        all_nodes: bool = False,
    ) -> Iterator[str]: ...

    def events(self) -> list[Event]:
        """The Kubernetes events about the job: its object, what its operators made for it
        and its pods, oldest first."""
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


def _state_named(value: object) -> JobState | None:
    """The `JobState` `value` is or names (its value or its name, in any case), else None."""
    if isinstance(value, JobState):
        return value
    if isinstance(value, str):
        wanted = value.strip().lower()
        return next((s for s in JobState if wanted in (s.value.lower(), s.name.lower())), None)
    return None


def wanted_states(until: Until | float) -> frozenset[JobState]:
    """The states `until` names: a bare state, a state's name (``"Running"``), or a
    collection of either."""
    if isinstance(until, JobState | str):
        items: Collection[object] = (until,)
    elif isinstance(until, bytes) or not isinstance(until, Collection):
        raise TypeError(
            f"until must be a JobState or a collection of them, got {until!r}; the timeout is "
            "passed as timeout=..."
        )
    else:
        items = until
    states = [_state_named(item) for item in items]
    if not states or any(s is None for s in states):
        allowed = ", ".join(repr(s.value) for s in JobState)
        raise ValueError(f"until must name job states ({allowed}); got {until!r}")
    return frozenset(s for s in states if s is not None)


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
    progress: bool | Progress,
    stuck: Callable[[S], str | None] | None = None,
    callback: Callable[[S], object] | None = None,
) -> S:
    """Poll `status()` (one request each) until the job is in (one of) `until`; the
    `TerminalFailure` when it ends otherwise (or `stuck` says why it will not move),
    `WaitTimeout` after `timeout` seconds. `callback` sees every status read (its errors
    propagate: a callback may end the wait by raising). The shared body of every job's
    `wait`."""
    until, timeout = timeout_passed_as_until(until, timeout)
    wanted = wanted_states(until)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable (it gets each status), got {callback!r}")

    def read() -> S:
        current = status()
        if callback is not None:
            callback(current)
        return current

    def failed(current: S) -> str | None:
        if current.state in wanted:
            return None
        if current.state.is_terminal:
            return current.message or current.reason or current.state.value
        return stuck(current) if stuck is not None else None

    return wait_until(
        read,
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
        """(pod, container) whose log is the job's output; `NoPodYet` while there is none."""

    @abc.abstractmethod
    def _pod_selectors(self, obj: KubeResource) -> list[Mapping[str, str]]:
        """Label selectors that together find every pod run for the job (`obj` as read)."""

    @abc.abstractmethod
    def stop(self) -> S: ...

    @abc.abstractmethod
    def resume(self) -> S: ...

    def _stuck(self, status: S) -> str | None:
        """Why the job will not get anywhere by itself (stopped by the user), or None."""
        return None

    def _made_for(self, obj: KubeResource) -> list[tuple[str, str]]:
        """(kind, name) of the objects the job's operators made for it (a RayCluster, a
        JobSet...), whose events are the job's too."""
        return []

    @property
    def _subject(self) -> str:
        return f"{self._model().__name__} {self._connection()[1]}/{self.name}"

    # -- the shape ------------------------------------------------------------------------------

    def _fetch(self) -> KubeResource:
        client, namespace = self._connection()
        return client.get(self._model(), self.name, namespace=namespace)

    def _read_status(self) -> S:
        """The status as the object says, without its events (one GET)."""
        return self._status_of(self._fetch())

    def status(self) -> S:
        """Where the job stands now (see `Job.status`). One GET; while the job is pending or
        once it has failed, the newest events about it and its pods are read too (a list of
        its pods and one of the namespace's events) and shown with it (`JobStatus.events`)."""
        obj = self._fetch()
        current = self._status_of(obj)
        if current.state not in _EVENT_STATES:
            return current
        return dataclasses.replace(current, events=self._event_lines(obj))

    def _event_lines(self, obj: KubeResource, *, warnings_only: bool = False) -> tuple[str, ...]:
        """The newest events about the job as lines; none when this user may not read events
        (the status is still worth showing)."""
        try:
            found = self._events_of(obj)
        except flarekit.client.Forbidden:
            return ()
        if warnings_only:
            found = [e for e in found if e.type == "Warning"]
        return tuple(event_line(e) for e in found[-_SHOWN_EVENTS:])

    def wait(
        self,
        until: Until = JobState.SUCCEEDED,
        *,
        timeout: float = 3600.0,
        poll: float = 0.5,
        progress: bool | Progress = True,
        callback: Callable[[S], object] | None = None,
    ) -> S:
        """The status once the job is in (one of) `until` (default: succeeded); `until` is a
        `JobState`, a state's name (``"Running"``) or a collection of either. `callback`, if
        given, is called with every status read (once per poll).

        Raises `TerminalFailure` quoting the server's message (and the newest warning events
        about the job and its pods) when the job ends in a state not in `until` (or is
        stopped while waiting), `WaitTimeout` after `timeout` seconds. Each poll is one GET
        of the job's object.
        """
        try:
            return wait_for_state(
                self._read_status, until, self._subject, timeout=timeout, poll=poll,
                progress=progress, stuck=self._stuck, callback=callback,
            )  # fmt: skip
        except TerminalFailure as failure:
            lines = self._failure_events()
            if not lines:
                raise
            reason = failure.reason + "; events: " + " | ".join(lines)
            raise TerminalFailure(
                what=failure.what, reason=reason, last_state=failure.last_state
            ) from None

    def _failure_events(self) -> tuple[str, ...]:
        try:
            return self._event_lines(self._fetch(), warnings_only=True)
        except flarekit.client.NotFound:
            return ()

    @overload
    def logs(
        self,
        *,
        follow: Literal[False] = False,
        tail: int | None = None,
        since: float | None = None,
        all_nodes: bool = False,
    ) -> str: ...

    @overload
    def logs(
        self,
        *,
        follow: Literal[True],
        tail: int | None = None,
        since: float | None = None,
        all_nodes: bool = False,
    ) -> Iterator[str]: ...

    def logs(
        self,
        *,
        follow: bool = False,
        tail: int | None = None,
        since: float | None = None,
        all_nodes: bool = False,
    ) -> str | Iterator[str]:
        """The job's output: all of it, the last `tail` lines, the lines of the last `since`
        seconds, or (`follow=True`) an iterator of lines as they come until the pod ends.
        Following a job that has no pod yet (queued, or starting) waits for its first pod,
        showing the job's state in a terminal; `NoPodYet` without `follow`.

        `all_nodes=True` reads every pod of the job, each line prefixed ``[<rank>/<pod>]``:
        pod after pod, or (`follow=True`) merged in the order lines arrive, through pod
        restarts, until the job has ended (see `flarekit.job._merged_logs`)."""
        if all_nodes:
            return self._all_nodes_log(follow=follow, tail=tail, since=since)
        return self._read_log(self._log_pod, follow=follow, tail=tail, since=since)

    def _all_nodes_log(
        self, *, follow: bool, tail: int | None, since: float | None
    ) -> str | Iterator[str]:
        flarekit.client.check_log_options(tail, since)
        if follow:
            return follow_all_nodes(self, tail=tail, since=since)
        client, namespace = self._connection()
        out: list[str] = []
        for pod in job_pods(client, namespace, self._pod_selectors(self._fetch())):
            text = flarekit.client.read_logs(
                client, namespace, pod.name, container=pod.default_container, tail=tail,
                since=since,
            )  # fmt: skip
            prefix = f"[{node_rank(pod)}/{pod.name}] "
            out.extend(prefix + line + "\n" for line in text.splitlines())
        return "".join(out)

    def _read_log(
        self,
        find: Callable[[], tuple[str, str | None]],
        *,
        follow: bool,
        tail: int | None,
        since: float | None,
    ) -> str | Iterator[str]:
        """The log of the pod `find()` names (see `logs`)."""
        flarekit.client.check_log_options(tail, since)
        client, namespace = self._connection()
        if not follow:
            pod, container = find()
            return flarekit.client.read_logs(
                client, namespace, pod, container=container, tail=tail, since=since
            )  # fmt: skip
        return self._follow_when_there(find, tail=tail, since=since)

    def _follow_when_there(
        self, find: Callable[[], tuple[str, str | None]], *, tail: int | None, since: float | None
    ) -> Iterator[str]:
        """Wait for the pod `find()` names (while the job has not ended), then follow it."""
        client, namespace = self._connection()
        pod: tuple[str, str | None] | None = None

        def look() -> tuple[tuple[str, str | None] | None, S | None]:
            nonlocal pod
            try:
                pod = find()
                return pod, None
            except NoPodYet:
                return None, self._read_status()

        def ended(seen: tuple[tuple[str, str | None] | None, S | None]) -> str | None:
            current = seen[1]
            if current is None or not current.finished:
                return None
            return f"it ended ({current.summary}) without a pod to read a log from"

        wait_until(
            look,
            lambda seen: seen[0] is not None,
            ended,
            timeout=WAIT_FOR_POD,
            describe=f"the first pod of {self._subject}",
            poll=1.0,
            state=lambda seen: seen[1].summary if seen[1] is not None else "pod found",
        )
        assert pod is not None
        yield from flarekit.client.follow_logs(
            client, namespace, pod[0], container=pod[1], tail=tail, since=since
        )

    def events(self) -> list[Event]:
        """The events about the job, oldest first: about its object, what its operators made
        for it (see `_made_for`), its Kueue Workload, and its pods. A GET of the job, a list
        of its pods per selector, and a list of the namespace's events."""
        return self._events_of(self._fetch())

    def _events_of(self, obj: KubeResource) -> list[Event]:
        client, namespace = self._connection()
        kind = self._model().resource_info().kind
        subjects = [(kind, self.name), *self._made_for(obj)]
        pods = pod_names(client, namespace, self._pod_selectors(obj))
        return events_about(client, namespace, [*subjects, *pods], workloads_of=subjects)

    def delete(self, *, wait: bool = False, timeout: float = 300.0) -> bool:
        """Delete the job and what it made; False when there was nothing to delete. With
        `wait`, return once the object is gone."""
        client, namespace = self._connection()
        try:
            client.delete(
                self._model(), self.name, namespace=namespace, propagation_policy=self._propagation
            )
        except flarekit.client.NotFound:
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
        try:
            self._fetch()
        except flarekit.client.NotFound:
            return True
        return False
