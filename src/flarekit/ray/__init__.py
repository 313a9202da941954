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

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit.ray._jobs import RayJobClient as RayJobClient
    from flarekit.ray._jobs_errors import RayDashboardUnavailable as RayDashboardUnavailable
    from flarekit.ray._jobs_errors import RayJobNotFound as RayJobNotFound
    from flarekit.ray._jobs_errors import RayJobsApiError as RayJobsApiError
    from flarekit.ray._jobs_errors import RayJobsError as RayJobsError
    from flarekit.ray._jobs_errors import RayJobTimeout as RayJobTimeout
    from flarekit.ray._jobs_errors import RayJobValidationError as RayJobValidationError
    from flarekit.ray._jobs_http import Verify as Verify
    from flarekit.ray._jobs_models import DriverInfo as DriverInfo
    from flarekit.ray._jobs_models import JobDetails as JobDetails
    from flarekit.ray._jobs_models import RayJobState as RayJobState
    from flarekit.ray._jobs_models import RayVersion as RayVersion
    from flarekit.ray._jobs_models import SubmitRequest as SubmitRequest
    from flarekit.ray._jobs_validation import build_submit_request as build_submit_request
    from flarekit.ray._jobs_validation import check_submission_id as check_submission_id

_public, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit.ray._jobs": ("RayJobClient",),
        "flarekit.ray._jobs_errors": (
            "RayDashboardUnavailable",
            "RayJobNotFound",
            "RayJobTimeout",
            "RayJobValidationError",
            "RayJobsApiError",
            "RayJobsError",
        ),
        "flarekit.ray._jobs_http": ("Verify",),
        "flarekit.ray._jobs_models": (
            "DriverInfo",
            "JobDetails",
            "RayJobState",
            "RayVersion",
            "SubmitRequest",
        ),
        "flarekit.ray._jobs_validation": (
            "build_submit_request",
            "check_submission_id",
        ),
    },
)


def __getattr__(name: str) -> Any:
    if name == "JobStatus":  # its name before flarekit.JobStatus, a job's status, existed
        warnings.warn(
            "flarekit.ray.JobStatus is now flarekit.ray.RayJobState (flarekit.JobStatus is a "
            "job's status)",
            DeprecationWarning,
            stacklevel=2,
        )
        return _public("RayJobState")
    return _public(name)
