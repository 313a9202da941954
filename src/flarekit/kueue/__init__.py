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

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit._rollback import RollbackIncomplete as RollbackIncomplete
    from flarekit._validation import ConfigError as ConfigError
    from flarekit._validation import Problem as Problem
    from flarekit.client import NotServed as NotServed
    from flarekit.kueue._admin import AdminSpec as AdminSpec
    from flarekit.kueue._admin import apply_all as apply_all
    from flarekit.kueue._admin import apply_cluster_queue as apply_cluster_queue
    from flarekit.kueue._admin import apply_local_queue as apply_local_queue
    from flarekit.kueue._admin import apply_resource_flavor as apply_resource_flavor
    from flarekit.kueue._admin import apply_workload_priority_class as apply_workload_priority_class
    from flarekit.kueue._cluster_queue import ClusterQueueSpec as ClusterQueueSpec
    from flarekit.kueue._cluster_queue import Quota as Quota
    from flarekit.kueue._flavor import ResourceFlavorSpec as ResourceFlavorSpec
    from flarekit.kueue._local_queue import LocalQueueSpec as LocalQueueSpec
    from flarekit.kueue._models import PRIORITY_LABEL as PRIORITY_LABEL
    from flarekit.kueue._models import QUEUE_LABEL as QUEUE_LABEL
    from flarekit.kueue._models import kueue_model as kueue_model
    from flarekit.kueue._priority import WorkloadPriorityClassSpec as WorkloadPriorityClassSpec
    from flarekit.kueue._queues import DEFAULT_QUEUE_ANNOTATION as DEFAULT_QUEUE_ANNOTATION
    from flarekit.kueue._queues import DEFAULT_QUEUE_NAME as DEFAULT_QUEUE_NAME
    from flarekit.kueue._queues import QueueNotFound as QueueNotFound
    from flarekit.kueue._queues import QueueOptOutWarning as QueueOptOutWarning
    from flarekit.kueue._queues import check_no_queue as check_no_queue
    from flarekit.kueue._queues import check_queue_labels as check_queue_labels
    from flarekit.kueue._queues import chosen_priority as chosen_priority
    from flarekit.kueue._queues import chosen_queue as chosen_queue
    from flarekit.kueue._queues import local_queue_names as local_queue_names
    from flarekit.kueue._queues import maybe_local_queue as maybe_local_queue
    from flarekit.kueue._queues import opt_out_of_queue as opt_out_of_queue
    from flarekit.kueue._queues import queue_labels as queue_labels
    from flarekit.kueue._queues import resolve_local_queue as resolve_local_queue
    from flarekit.kueue._status import QueueList as QueueList
    from flarekit.kueue._status import QueueStatus as QueueStatus
    from flarekit.kueue._status import ResourceUsage as ResourceUsage
    from flarekit.kueue._status import list_queues as list_queues
    from flarekit.kueue._status import queue_status as queue_status
    from flarekit.kueue._workloads import JOB_UID_LABEL as JOB_UID_LABEL
    from flarekit.kueue._workloads import AdmissionState as AdmissionState
    from flarekit.kueue._workloads import admission_state as admission_state
    from flarekit.kueue._workloads import workload_for as workload_for

__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit._rollback": ("RollbackIncomplete",),
        "flarekit._validation": (
            "ConfigError",
            "Problem",
        ),
        "flarekit.client": ("NotServed",),
        "flarekit.kueue._admin": (
            "AdminSpec",
            "apply_all",
            "apply_cluster_queue",
            "apply_local_queue",
            "apply_resource_flavor",
            "apply_workload_priority_class",
        ),
        "flarekit.kueue._cluster_queue": (
            "ClusterQueueSpec",
            "Quota",
        ),
        "flarekit.kueue._flavor": ("ResourceFlavorSpec",),
        "flarekit.kueue._local_queue": ("LocalQueueSpec",),
        "flarekit.kueue._models": (
            "PRIORITY_LABEL",
            "QUEUE_LABEL",
            "kueue_model",
        ),
        "flarekit.kueue._priority": ("WorkloadPriorityClassSpec",),
        "flarekit.kueue._queues": (
            "DEFAULT_QUEUE_ANNOTATION",
            "DEFAULT_QUEUE_NAME",
            "QueueNotFound",
            "QueueOptOutWarning",
            "check_no_queue",
            "check_queue_labels",
            "chosen_priority",
            "chosen_queue",
            "local_queue_names",
            "maybe_local_queue",
            "opt_out_of_queue",
            "queue_labels",
            "resolve_local_queue",
        ),
        "flarekit.kueue._status": (
            "QueueList",
            "QueueStatus",
            "ResourceUsage",
            "list_queues",
            "queue_status",
        ),
        "flarekit.kueue._workloads": (
            "AdmissionState",
            "JOB_UID_LABEL",
            "admission_state",
            "workload_for",
        ),
    },
)
