"""Kueue for everyone: which queue a job goes to, why it waits, and queue administration.

Works with whichever Kueue API the cluster serves (``v1beta2``, else ``v1beta1``).
"""

from flarekit._served import NotServed
from flarekit.kueue._models import PRIORITY_LABEL, QUEUE_LABEL
from flarekit.kueue._queues import (
    DEFAULT_QUEUE_ANNOTATION,
    DEFAULT_QUEUE_NAME,
    QueueNotFound,
    local_queue_names,
    maybe_local_queue,
    queue_labels,
    resolve_local_queue,
)
from flarekit.kueue._workloads import JOB_UID_LABEL, AdmissionState, admission_state, workload_for

__all__ = [
    "DEFAULT_QUEUE_ANNOTATION",
    "DEFAULT_QUEUE_NAME",
    "JOB_UID_LABEL",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "AdmissionState",
    "NotServed",
    "QueueNotFound",
    "admission_state",
    "local_queue_names",
    "maybe_local_queue",
    "queue_labels",
    "resolve_local_queue",
    "workload_for",
]
