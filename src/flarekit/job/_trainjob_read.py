"""A TrainJob on the cluster read back into `flarekit.job.TrainJob`'s parameters.

Why: people attach to jobs they did not submit from this process (another notebook, a
colleague, ``kubectl apply``), and still want ``status()``, ``wait()``, ``logs()`` and
``delete()``. The object is read as plain JSON and every field is optional, so that a TrainJob
written by hand, or by any Trainer release, reads without errors; what has no parameter
(``env`` taken from secrets, pod customisation, which lives in a different field in each
Trainer release) is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flarekit.client import CREATED_FROM
from flarekit.job._jobstate import JobState, JobStatus, condition_rows, true_condition
from flarekit.kueue import PRIORITY_LABEL, QUEUE_LABEL
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit_models.core.v1 import EnvVar
    from flarekit_models.trainer.v1alpha1 import TrainJob

__all__ = ["read_params", "trainjob_status"]

_RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def _env(items: Sequence[EnvVar] | None) -> dict[str, str]:
    """Plain ``name: value`` variables (those read from secrets or fields have no parameter)."""
    return {e.name: e.value or "" for e in items or () if e.name and e.value_from is None}


def read_params(obj: TrainJob) -> dict[str, object]:
    """The `TrainJob` parameters a TrainJob object expresses, by name.

    `resources_per_node` are the requests (else the limits) of ``trainer.resourcesPerNode``;
    `local_queue` and `priority_class` come from the Kueue labels, which are left out of
    `labels`; a queued job's ``spec.suspend`` is Kueue's, so only an unqueued job reads as
    created suspended.
    """
    metadata, spec = obj.metadata, obj.spec
    labels = dict(metadata.labels or {}) if metadata is not None else {}
    annotations = dict(metadata.annotations or {}) if metadata is not None else {}
    ref = spec.runtime_ref if spec is not None else None
    trainer = spec.trainer if spec is not None else None
    resources = trainer.resources_per_node if trainer is not None else None
    per_node = (resources.requests or resources.limits or {}) if resources is not None else {}
    queue = labels.pop(QUEUE_LABEL, None)
    kind = ref.kind if ref is not None else None
    return {
        "name": (metadata.name if metadata is not None else None) or "",
        "namespace": metadata.namespace if metadata is not None else None,
        "runtime": (ref.name if ref is not None else None) or "",
        "runtime_kind": kind if kind in _RUNTIME_KINDS else None,
        "image": trainer.image if trainer is not None else None,
        "command": list(trainer.command or ()) if trainer is not None else [],
        "args": list(trainer.args or ()) if trainer is not None else [],
        "num_nodes": trainer.num_nodes if trainer is not None else None,
        "num_proc_per_node": trainer.num_proc_per_node if trainer is not None else None,
        "resources_per_node": {k: str(v) for k, v in per_node.items()},
        "env": _env(trainer.env if trainer is not None else None),
        "labels": labels,
        "annotations": {k: v for k, v in annotations.items() if k != CREATED_FROM},
        "local_queue": queue,
        "priority_class": labels.pop(PRIORITY_LABEL, None),
        "suspend": bool(spec is not None and spec.suspend) and queue is None,
        "active_deadline_seconds": spec.active_deadline_seconds if spec is not None else None,
    }


def trainjob_status(job: trainer_v1alpha1.TrainJob) -> JobStatus:
    """The `JobStatus` of a TrainJob, fresh objects included."""
    status, meta = job.status, job.metadata
    conditions = status.conditions if status is not None else None
    jobs = (status.jobs_status if status is not None else None) or ()
    replicas = {
        j.name: {
            "active": j.active, "ready": j.ready, "succeeded": j.succeeded, "failed": j.failed,
            "suspended": j.suspended,
        }
        for j in jobs
    }  # fmt: skip
    state, found = JobState.PENDING, None
    for type_, each in (
        ("Failed", JobState.FAILED),
        ("Complete", JobState.SUCCEEDED),
        ("Suspended", JobState.SUSPENDED),
    ):
        found = true_condition(conditions, type_)
        if found is not None:
            state = each
            break
    if found is None and job.spec is not None and job.spec.suspend:
        state = JobState.SUSPENDED
    elif found is None and any(j.active or j.ready for j in jobs):
        state = JobState.RUNNING
    return JobStatus(
        kind="TrainJob",
        name=(meta.name if meta is not None else None) or "",
        namespace=(meta.namespace if meta is not None else None) or "",
        state=state,
        reason=(found.reason if found is not None else None) or "",
        message=(found.message if found is not None else None) or "",
        replicas=replicas,
        conditions=condition_rows(conditions),
    )
