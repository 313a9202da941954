"""A simulated Kubeflow Trainer (v2) TrainJob controller: run, then Complete or Failed.

Trainer reports a TrainJob through conditions and `jobsStatus`, one entry per replicated job
of the runtime's JobSet. It copies the JobSet's terminal condition, so success is `Complete`
(reason `AllJobsCompleted`, "jobset completed successfully") and failure `Failed` (reason
`FailedJobs`). `spec.suspend: true` sets `Suspended` (reason `Suspended`); resuming sets it
False with reason `Resumed` and restarts the schedule. Trainer 2.x has no `Created` condition
(it was removed before 2.0), so none is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flarekit.testing import _sim_podsets as podsets
from flarekit.testing._sim_base import (
    Clock,
    SimController,
    check_delay,
    condition,
    is_suspended,
    set_condition,
)

if TYPE_CHECKING:
    from flarekit.testing._server import FakeCluster

JSON = dict[str, Any]

DEFAULT_FAILURE = "jobset failed due to one or more job failures"


class TrainJobController(SimController):
    """Runs TrainJobs for `run_for` seconds after creation (or resumption), then ends them.

    `fail=True` (or `fail_when(obj)` returning True) ends them Failed with `failure_message`.
    """

    resource = "trainjobs.trainer.kubeflow.org"

    def __init__(
        self,
        run_for: float = 0.0,
        *,
        fail: bool = False,
        fail_when: Callable[[JSON], bool] | None = None,
        failure_message: str = DEFAULT_FAILURE,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(clock)
        check_delay("run_for", run_for)
        self.run_for = run_for
        self.fail = fail
        self.fail_when = fail_when
        self.failure_message = failure_message

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        if any(_true(obj, t) for t in ("Complete", "Failed")):
            return
        generation = obj["metadata"].get("generation")
        conditions = list((obj.get("status") or {}).get("conditions") or [])
        jobs = [name for name, _, _ in podsets.trainjob(cluster, obj)]
        if is_suspended(obj):
            conditions = set_condition(
                conditions, "Suspended", True, "Suspended", "TrainJob is suspended", generation
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "suspended")}
            self.write_status(cluster, obj, status)
            return
        if _true(obj, "Suspended"):
            self.restart_schedule(obj)
            conditions = set_condition(
                conditions, "Suspended", False, "Resumed", "TrainJob is resumed", generation
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "active", ready=True)}
            self.write_status(cluster, obj, status)
            return
        if since < self.run_for:
            self.write_status(cluster, obj, {"jobsStatus": _jobs(jobs, "active", ready=True)})
            return
        if self.fail or (self.fail_when is not None and self.fail_when(obj)):
            conditions = set_condition(
                conditions, "Failed", True, "FailedJobs", self.failure_message, generation
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "failed")}
        else:
            conditions = set_condition(
                conditions,
                "Complete",
                True,
                "AllJobsCompleted",
                "jobset completed successfully",
                generation,
            )
            status = {"conditions": conditions, "jobsStatus": _jobs(jobs, "succeeded")}
        self.write_status(cluster, obj, status)


def _true(obj: JSON, type_: str) -> bool:
    found = condition(obj, type_)
    return found is not None and found.get("status") == "True"


def _jobs(names: list[str], counter: str, ready: bool = False) -> list[JSON]:
    """One `jobsStatus` entry per replicated job, its one job counted under `counter`."""
    out = []
    for name in names:
        entry = {"name": name, "active": 0, "ready": 0, "succeeded": 0, "failed": 0, "suspended": 0}
        entry[counter] = 1
        if ready:
            entry["ready"] = 1
        out.append(entry)
    return out
