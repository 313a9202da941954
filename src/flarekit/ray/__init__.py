"""Ray without installing Ray: a client for the Jobs REST API of a running Ray cluster.

`RayJobClient` submits jobs to a Ray dashboard, reads and follows their logs, waits for them,
stops, lists and deletes them, over plain HTTP(S) with an optional bearer token::

    from flarekit.ray import RayJobClient

    client = RayJobClient("http://127.0.0.1:8265")
    job = client.submit("python train.py", runtime_env={"env_vars": {"EPOCHS": "3"}})
    for chunk in client.follow_logs(job):
        print(chunk, end="")
    print(client.wait(job).status)
"""

from typing import Any

from flarekit.ray._jobs import RayJobClient
from flarekit.ray._jobs_errors import (
    RayDashboardUnavailable,
    RayJobNotFound,
    RayJobsApiError,
    RayJobsError,
    RayJobTimeout,
    RayJobValidationError,
)
from flarekit.ray._jobs_models import DriverInfo, JobDetails, RayJobState, RayVersion

__all__ = [
    "DriverInfo",
    "JobDetails",
    "RayDashboardUnavailable",
    "RayJobClient",
    "RayJobNotFound",
    "RayJobState",
    "RayJobTimeout",
    "RayJobValidationError",
    "RayJobsApiError",
    "RayJobsError",
    "RayVersion",
]


def __getattr__(name: str) -> Any:
    if name == "JobStatus":  # its name before flarekit.JobStatus, a job's status, existed
        import warnings

        warnings.warn(
            "flarekit.ray.JobStatus is now flarekit.ray.RayJobState (flarekit.JobStatus is a "
            "job's status)",
            DeprecationWarning,
            stacklevel=2,
        )
        return RayJobState
    raise AttributeError(f"module 'flarekit.ray' has no attribute {name!r}")
