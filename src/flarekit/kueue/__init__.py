"""Kueue for everyone: which queue a job goes to, why it waits, and queue administration.

For users: `resolve_local_queue` (a named LocalQueue must exist; otherwise the namespace's
default one), `queue_labels`, `workload_for` and `admission_state` (is my job admitted, and
if not, why), `list_queues` / `queue_status` (queues with their usage and quota).

For platform admins: `ResourceFlavorSpec`, `ClusterQueueSpec` (quota per flavor and
resource), `LocalQueueSpec` and `WorkloadPriorityClassSpec`, validated on construction and
rendered offline (`to_yaml()`), applied together with `apply_all` or one at a time with the
`apply_*` functions (a failed `apply_all` removes what it created; `RollbackIncomplete`
names what it could not).

Everything works with whichever Kueue API the cluster serves (``v1beta2``, else ``v1beta1``).
"""

from flarekit._rollback import RollbackIncomplete
from flarekit._validation import ConfigError, Problem
from flarekit.client._served import NotServed
from flarekit.kueue._admin import (
    AdminSpec,
    apply_all,
    apply_cluster_queue,
    apply_local_queue,
    apply_resource_flavor,
    apply_workload_priority_class,
)
from flarekit.kueue._cluster_queue import ClusterQueueSpec, Quota
from flarekit.kueue._flavor import ResourceFlavorSpec
from flarekit.kueue._local_queue import LocalQueueSpec
from flarekit.kueue._models import PRIORITY_LABEL, QUEUE_LABEL
from flarekit.kueue._priority import WorkloadPriorityClassSpec
from flarekit.kueue._queues import (
    DEFAULT_QUEUE_ANNOTATION,
    DEFAULT_QUEUE_NAME,
    QueueNotFound,
    QueueOptOutWarning,
    check_no_queue,
    local_queue_names,
    maybe_local_queue,
    opt_out_of_queue,
    queue_labels,
    resolve_local_queue,
)
from flarekit.kueue._status import (
    QueueList,
    QueueStatus,
    ResourceUsage,
    list_queues,
    queue_status,
)
from flarekit.kueue._workloads import (
    JOB_UID_LABEL,
    AdmissionState,
    admission_state,
    workload_for,
)

__all__ = [
    "DEFAULT_QUEUE_ANNOTATION",
    "DEFAULT_QUEUE_NAME",
    "JOB_UID_LABEL",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "AdminSpec",
    "AdmissionState",
    "ClusterQueueSpec",
    "ConfigError",
    "LocalQueueSpec",
    "NotServed",
    "Problem",
    "QueueList",
    "QueueNotFound",
    "QueueOptOutWarning",
    "QueueStatus",
    "Quota",
    "ResourceFlavorSpec",
    "ResourceUsage",
    "RollbackIncomplete",
    "WorkloadPriorityClassSpec",
    "admission_state",
    "apply_all",
    "apply_cluster_queue",
    "apply_local_queue",
    "apply_resource_flavor",
    "apply_workload_priority_class",
    "check_no_queue",
    "list_queues",
    "local_queue_names",
    "maybe_local_queue",
    "opt_out_of_queue",
    "queue_labels",
    "queue_status",
    "resolve_local_queue",
    "workload_for",
]
