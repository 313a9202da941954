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

from typing import TYPE_CHECKING

from flarekit.job._distributed import DistributedJob
from flarekit.job._job import Job, JobError, JobSpec
from flarekit.job._jobstate import JobState, JobStatus
from flarekit.job._packaging import PackagingError
from flarekit.job._pytorchjob import PyTorchJobRun
from flarekit.job._ray_launch import RayRun
from flarekit.job._rayjob import RayJob, RayJobError
from flarekit.job._rayjob_status import RayJobStatus
from flarekit.job._runtimes import Runtime, RuntimeNotFound, get_runtime, list_runtimes
from flarekit.job._trainjob import TrainJob

__all__ = [
    "DistributedJob",
    "Job",
    "JobError",
    "JobSpec",
    "JobState",
    "JobStatus",
    "PackagingError",
    "PyTorchJobRun",
    "RayJob",
    "RayJobError",
    "RayJobStatus",
    "RayRun",
    "Runtime",
    "RuntimeNotFound",
    "TrainJob",
    "get_runtime",
    "list_runtimes",
]

if TYPE_CHECKING:
    # The type checker holds every kind of job to the one shape.
    _HANDLES: tuple[type[Job], ...] = (RayJob, TrainJob, PyTorchJobRun, RayRun)
    _SPECS: tuple[type[JobSpec], ...] = (RayJob, TrainJob, DistributedJob)
