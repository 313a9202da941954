"""Jobs on Kubernetes for people who do not want to learn Kubernetes.

:class:`RayJob` runs a command on a Ray cluster through KubeRay (an existing cluster, or one
made for the job and deleted after it), optionally queued by Kueue: it validates everything
before the first request, renders to YAML offline, and submits, waits, reads logs, stops and
deletes.

:class:`TrainJob` runs an image or a Python function on Kubeflow Trainer from a runtime
(:func:`list_runtimes`), and :class:`DistributedJob` is a torchrun job (TorchX ``dist.ddp``
style) run as a TrainJob, a training-operator PyTorchJob (optionally in an AppWrapper) or on a
Ray cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit.job._distributed import DistributedJob as DistributedJob
    from flarekit.job._job import Job as Job
    from flarekit.job._job import JobError as JobError
    from flarekit.job._job import JobSpec as JobSpec
    from flarekit.job._jobstate import JobState as JobState
    from flarekit.job._jobstate import JobStatus as JobStatus
    from flarekit.job._listing import JobKind as JobKind
    from flarekit.job._listing import ListedJob as ListedJob
    from flarekit.job._listing import find_jobs as find_jobs
    from flarekit.job._packaging import PackagingError as PackagingError
    from flarekit.job._pytorchjob import PyTorchJobRun as PyTorchJobRun
    from flarekit.job._ray_launch import RayRun as RayRun
    from flarekit.job._rayjob import RayJob as RayJob
    from flarekit.job._rayjob import RayJobError as RayJobError
    from flarekit.job._rayjob_status import RayJobStatus as RayJobStatus
    from flarekit.job._runtimes import Runtime as Runtime
    from flarekit.job._runtimes import RuntimeNotFound as RuntimeNotFound
    from flarekit.job._runtimes import get_runtime as get_runtime
    from flarekit.job._runtimes import list_runtimes as list_runtimes
    from flarekit.job._trainjob import TrainJob as TrainJob

    # The type checker holds every kind of job to the one shape.
    _HANDLES: tuple[type[Job], ...] = (RayJob, TrainJob, PyTorchJobRun, RayRun)
    _SPECS: tuple[type[JobSpec], ...] = (RayJob, TrainJob, DistributedJob)

__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit.job._distributed": ("DistributedJob",),
        "flarekit.job._job": (
            "Job",
            "JobError",
            "JobSpec",
        ),
        "flarekit.job._jobstate": (
            "JobState",
            "JobStatus",
        ),
        "flarekit.job._listing": (
            "JobKind",
            "ListedJob",
            "find_jobs",
        ),
        "flarekit.job._packaging": ("PackagingError",),
        "flarekit.job._pytorchjob": ("PyTorchJobRun",),
        "flarekit.job._ray_launch": ("RayRun",),
        "flarekit.job._rayjob": (
            "RayJob",
            "RayJobError",
        ),
        "flarekit.job._rayjob_status": ("RayJobStatus",),
        "flarekit.job._runtimes": (
            "Runtime",
            "RuntimeNotFound",
            "get_runtime",
            "list_runtimes",
        ),
        "flarekit.job._trainjob": ("TrainJob",),
    },
)
