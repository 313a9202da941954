"""Jobs on Kubernetes for people who do not want to learn Kubernetes.

:class:`RayJob` runs a command on a Ray cluster through KubeRay (an existing cluster, or one
made for the job and deleted after it), optionally queued by Kueue: it validates everything
before the first request, renders to YAML offline, and submits, waits, reads logs, stops and
deletes.
"""

from flarekit.job._rayjob import RayJob, RayJobError
from flarekit.job._rayjob_status import RayJobStatus

__all__ = [
    "RayJob",
    "RayJobError",
    "RayJobStatus",
]
