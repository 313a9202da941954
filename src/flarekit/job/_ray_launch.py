"""Running a torchrun job on a Ray cluster through the Ray Jobs API.

A Ray job's entrypoint runs once, on the head node, so ``torchrun --nnodes N`` there alone
would start nothing on other nodes. The entrypoint is therefore the launcher in
`flarekit.job.ray_launcher` (a real module, tested as one), sent as ``python -c <its
source>`` with the job's spec: it places one torchrun per node through a placement group.
The same script runs unchanged here, in a TrainJob and in a PyTorchJob. Ray Train was not
chosen because its TorchTrainer sets up the process group itself, so scripts written for
torchrun would initialise it twice.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Literal, overload

import flarekit.ray
from flarekit.job._job import JobError, Until, wait_for_state
from flarekit.job._jobstate import JobState, JobStatus
from flarekit.job.ray_launcher import LaunchSpec, node_command

if TYPE_CHECKING:
    from flarekit._progress import Progress
    from flarekit.ray import RayJobClient
    from flarekit_models.core.v1 import Event

__all__ = ["RayRun", "launcher_source", "node_command", "ray_entrypoint"]


@cache
def launcher_source() -> str:
    """The source of `flarekit.job.ray_launcher`, as the cluster runs it."""
    from importlib import resources

    return resources.files("flarekit.job").joinpath("ray_launcher.py").read_text("utf-8")


def ray_entrypoint(
    *,
    nodes: int,
    procs: int,
    script: str | None,
    module: str | None,
    args: Sequence[str],
    env: Mapping[str, str],
    bundle: Mapping[str, float],
    gang: bool,
    placement_timeout: float = 300.0,
) -> tuple[str, LaunchSpec]:
    """The entrypoint command and the spec it carries (as its one argument)."""
    spec: LaunchSpec = {
        "nodes": nodes,
        "procs": procs,
        "script": script,
        "module": module,
        "args": list(args),
        "env": dict(env),
        "bundle": dict(bundle),
        "strategy": "STRICT_SPREAD" if gang else "SPREAD",
        "placement_timeout": placement_timeout,
    }
    command = f"python -c {shlex.quote(launcher_source())} {shlex.quote(json.dumps(spec))}"
    return command, spec


_RAY_STATES = {
    "PENDING": JobState.PENDING,
    "RUNNING": JobState.RUNNING,
    "SUCCEEDED": JobState.SUCCEEDED,
    "FAILED": JobState.FAILED,
    "STOPPED": JobState.STOPPED,
}


class RayRun:
    """A distributed job submitted to a running Ray cluster through the Ray Jobs API, with
    the `Job` methods. It is no Kubernetes object: `events()` is empty, and a stopped Ray
    job cannot be resumed (submit it again)."""

    def __init__(self, client: RayJobClient, submission_id: str, name: str) -> None:
        self.ray = client
        self.submission_id = submission_id
        self.name = name

    def status(self) -> JobStatus:
        details = self.ray.get(self.submission_id)
        return JobStatus(
            kind="RayJobSubmission",
            name=self.submission_id,
            namespace=self.ray.address,
            state=_RAY_STATES.get(details.status.value, JobState.PENDING),
            reason=str(getattr(details, "error_type", None) or ""),
            message=str(details.message or ""),
        )

    def wait(
        self,
        until: Until = JobState.SUCCEEDED,
        *,
        timeout: float = 3600.0,
        poll: float = 0.5,
        progress: bool | Progress = True,
        callback: Callable[[JobStatus], object] | None = None,
    ) -> JobStatus:
        """The status once the Ray job is in (one of) `until`; `TerminalFailure` when it
        ends otherwise, `WaitTimeout` after `timeout` seconds. `callback` is called with
        every status read."""
        return wait_for_state(
            self.status, until, f"Ray job {self.submission_id}", timeout=timeout, poll=poll,
            progress=progress, callback=callback,
        )  # fmt: skip

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
        """The Ray job's output (the last `tail` lines), or `follow=True`: lines as they come.
        Ray's job logs carry no timestamps, so `since` (and `tail` while following) cannot
        be honoured and are refused rather than ignored. The Ray Jobs API keeps one log per
        job, its driver's, so `all_nodes=True` is refused too (`JobError`)."""
        if all_nodes:
            raise JobError(
                f"Ray job {self.submission_id}: the Ray Jobs API keeps one log, the driver's; "
                "read it without all_nodes, or each node's pod with `kubectl logs`"
            )
        if since is not None:
            raise ValueError("since: Ray's job logs have no timestamps; use tail=<lines>")
        if follow:
            if tail is not None:
                raise ValueError("tail: cannot be combined with follow for a Ray job's logs")
            return self.ray.follow_logs(self.submission_id)
        text = self.ray.logs(self.submission_id)
        if tail is None:
            return text
        lines = text.splitlines(keepends=True)
        return "".join(lines[-tail:]) if tail else ""

    def events(self) -> list[Event]:
        """Always empty: a Ray Jobs API submission has no Kubernetes object to report on."""
        return []

    def stop(self) -> JobStatus:
        """Ask Ray to stop the job; returns the status after the request."""
        self.ray.stop(self.submission_id)
        return self.status()

    def resume(self) -> JobStatus:
        """Not possible: Ray does not restart a stopped submission (`JobError`)."""
        raise JobError(
            f"Ray job {self.submission_id} cannot be resumed: the Ray Jobs API has no restart; "
            "submit the DistributedJob again"
        )

    def delete(self, *, wait: bool = False, timeout: float = 300.0) -> bool:
        """Stop the job if it still runs, then delete its record on the Ray cluster; False
        when there was none. Deletion is immediate, so `wait` has nothing to wait for."""
        try:
            if not self.status().finished:
                self.stop()
                self.wait(
                    (JobState.STOPPED, JobState.FAILED, JobState.SUCCEEDED),
                    timeout=timeout,
                    progress=False,
                )
            return self.ray.delete(self.submission_id)
        except flarekit.ray.RayJobNotFound:
            return False

    def __repr__(self) -> str:
        return f"RayRun({self.submission_id!r} on {self.ray.address})"
