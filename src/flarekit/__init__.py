"""flarekit: run distributed ML on Kubernetes (Ray, Kueue, AppWrapper, JobSet, Kubeflow Trainer).

    from flarekit import Cluster, ClusterConfiguration

    cluster = Cluster(ClusterConfiguration(name="demo", num_workers=2, local_queue="team-a"))
    cluster.apply()
    cluster.wait_ready()

The typed models live in the generated package ``flarekit_models``. Here: Ray clusters
(:mod:`flarekit.cluster`), jobs (:mod:`flarekit.job`: RayJob, TrainJob, DistributedJob), Kueue
queues (:mod:`flarekit.kueue`), the Ray Jobs REST client (:mod:`flarekit.ray`), the typed
Kubernetes client (:mod:`flarekit.client`). The test backends (FakeCluster, ControlPlane) are
the flarekit-testing distribution, :mod:`flarekit_testing`.

Public names load on first use, so ``import flarekit`` stays cheap: pydantic, the
``kubernetes`` package and the models load only when something needs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    # The public names, each from the public API of the subpackage that defines it.
    from flarekit._plan import ObjectChange as ObjectChange
    from flarekit._plan import Plan as Plan
    from flarekit._validation import ConfigError as ConfigError
    from flarekit._validation import Problem as Problem
    from flarekit._wait import TerminalFailure as TerminalFailure
    from flarekit._wait import WaitTimeout as WaitTimeout
    from flarekit.client import ALL_NAMESPACES as ALL_NAMESPACES
    from flarekit.client import AlreadyExists as AlreadyExists
    from flarekit.client import ApiError as ApiError
    from flarekit.client import ApiUnavailable as ApiUnavailable
    from flarekit.client import Cause as Cause
    from flarekit.client import Client as Client
    from flarekit.client import Conflict as Conflict
    from flarekit.client import Credentials as Credentials
    from flarekit.client import FieldValidation as FieldValidation
    from flarekit.client import Forbidden as Forbidden
    from flarekit.client import Gone as Gone
    from flarekit.client import InsecureConnectionWarning as InsecureConnectionWarning
    from flarekit.client import Invalid as Invalid
    from flarekit.client import KubeconfigError as KubeconfigError
    from flarekit.client import ListIterator as ListIterator
    from flarekit.client import NotFound as NotFound
    from flarekit.client import NotServed as NotServed
    from flarekit.client import PatchType as PatchType
    from flarekit.client import PortForward as PortForward
    from flarekit.client import PortForwardError as PortForwardError
    from flarekit.client import PropagationPolicy as PropagationPolicy
    from flarekit.client import PrunedFields as PrunedFields
    from flarekit.client import PrunedFieldsWarning as PrunedFieldsWarning
    from flarekit.client import ReadLimits as ReadLimits
    from flarekit.client import RetryPolicy as RetryPolicy
    from flarekit.client import ServerError as ServerError
    from flarekit.client import ServerWarning as ServerWarning
    from flarekit.client import Unauthorized as Unauthorized
    from flarekit.client import Watch as Watch
    from flarekit.client import WatchEvent as WatchEvent
    from flarekit.client import current_credentials as current_credentials
    from flarekit.client import from_kubeconfig as from_kubeconfig
    from flarekit.client import from_token as from_token
    from flarekit.client import in_cluster as in_cluster
    from flarekit.client import login as login
    from flarekit.client import logout as logout
    from flarekit.cluster import CASecretInvalid as CASecretInvalid
    from flarekit.cluster import CASecretNotFound as CASecretNotFound
    from flarekit.cluster import Cluster as Cluster
    from flarekit.cluster import ClusterConfiguration as ClusterConfiguration
    from flarekit.cluster import ClusterDetails as ClusterDetails
    from flarekit.cluster import ClusterState as ClusterState
    from flarekit.cluster import ClusterStatus as ClusterStatus
    from flarekit.cluster import DashboardNotExposed as DashboardNotExposed
    from flarekit.cluster import RayClientTLS as RayClientTLS
    from flarekit.cluster import RayClientUnavailable as RayClientUnavailable
    from flarekit.cluster import WorkerGroup as WorkerGroup
    from flarekit.cluster import generate_tls_cert as generate_tls_cert
    from flarekit.cluster import get_cluster as get_cluster
    from flarekit.cluster import list_all_clusters as list_all_clusters
    from flarekit.cluster import list_all_queued as list_all_queued
    from flarekit.compat import FieldUnavailable as FieldUnavailable
    from flarekit.compat import ServerReleases as ServerReleases
    from flarekit.compat import negotiate as negotiate
    from flarekit.job import DistributedJob as DistributedJob
    from flarekit.job import JobState as JobState
    from flarekit.job import JobStatus as JobStatus
    from flarekit.job import RayJob as RayJob
    from flarekit.job import RayJobError as RayJobError
    from flarekit.job import RayJobStatus as RayJobStatus
    from flarekit.job import Runtime as Runtime
    from flarekit.job import RuntimeNotFound as RuntimeNotFound
    from flarekit.job import TrainJob as TrainJob
    from flarekit.job import get_runtime as get_runtime
    from flarekit.job import list_runtimes as list_runtimes
    from flarekit.kueue import AdmissionState as AdmissionState
    from flarekit.kueue import ClusterQueueSpec as ClusterQueueSpec
    from flarekit.kueue import LocalQueueSpec as LocalQueueSpec
    from flarekit.kueue import QueueNotFound as QueueNotFound
    from flarekit.kueue import Quota as Quota
    from flarekit.kueue import ResourceFlavorSpec as ResourceFlavorSpec
    from flarekit.kueue import WorkloadPriorityClassSpec as WorkloadPriorityClassSpec
    from flarekit.kueue import apply_all as apply_all
    from flarekit.kueue import list_queues as list_queues
    from flarekit.kueue import queue_status as queue_status
    from flarekit.kueue import resolve_local_queue as resolve_local_queue
    from flarekit.ray import RayJobClient as RayJobClient

#: What people who come from CodeFlare SDK or the Kubeflow SDK reach for, and what to use.
_CARRIED_OVER = {
    "TokenAuthentication": "flarekit.login(server, token) or flarekit.from_token(...)",
    "KubeConfigFileAuthentication": "flarekit.from_kubeconfig(path)",
    "DDPJobDefinition": "flarekit.DistributedJob",
    "DDPJob": "flarekit.DistributedJob(...).submit()",
    "TrainerClient": "flarekit.TrainJob(...).submit() and flarekit.list_runtimes()",
    "CustomTrainer": "flarekit.TrainJob(func=...)",
    "TrainingClient": "flarekit.DistributedJob, or flarekit.TrainJob on Kubeflow Trainer",
    "RayJobSpec": "flarekit.RayJob",
    "generate_cert": "flarekit.generate_tls_cert(name, namespace), then its .export_env()",
}


def _no_such_name(name: str, public: Mapping[str, str]) -> str:
    message = f"module 'flarekit' has no attribute {name!r}"
    if name in _CARRIED_OVER:
        return f"{message}; use {_CARRIED_OVER[name]}"
    import difflib

    close = difflib.get_close_matches(name, public, n=3)
    return f"{message}; did you mean {' or '.join(close)}?" if close else message


__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit._plan": ("ObjectChange", "Plan"),
        "flarekit._validation": (
            "ConfigError",
            "Problem",
        ),
        "flarekit._wait": (
            "TerminalFailure",
            "WaitTimeout",
        ),
        "flarekit.client": (
            "ALL_NAMESPACES",
            "AlreadyExists",
            "ApiError",
            "ApiUnavailable",
            "Cause",
            "Client",
            "Conflict",
            "Credentials",
            "FieldValidation",
            "Forbidden",
            "Gone",
            "InsecureConnectionWarning",
            "Invalid",
            "KubeconfigError",
            "ListIterator",
            "NotFound",
            "NotServed",
            "PatchType",
            "PortForward",
            "PortForwardError",
            "PropagationPolicy",
            "PrunedFields",
            "PrunedFieldsWarning",
            "ReadLimits",
            "RetryPolicy",
            "ServerError",
            "ServerWarning",
            "Unauthorized",
            "Watch",
            "WatchEvent",
            "current_credentials",
            "from_kubeconfig",
            "from_token",
            "in_cluster",
            "login",
            "logout",
        ),
        "flarekit.cluster": (
            "CASecretInvalid",
            "CASecretNotFound",
            "Cluster",
            "ClusterConfiguration",
            "ClusterDetails",
            "ClusterState",
            "ClusterStatus",
            "DashboardNotExposed",
            "RayClientTLS",
            "RayClientUnavailable",
            "WorkerGroup",
            "generate_tls_cert",
            "get_cluster",
            "list_all_clusters",
            "list_all_queued",
        ),
        "flarekit.compat": (
            "FieldUnavailable",
            "ServerReleases",
            "negotiate",
        ),
        "flarekit.job": (
            "DistributedJob",
            "JobState",
            "JobStatus",
            "RayJob",
            "RayJobError",
            "RayJobStatus",
            "Runtime",
            "RuntimeNotFound",
            "TrainJob",
            "get_runtime",
            "list_runtimes",
        ),
        "flarekit.kueue": (
            "AdmissionState",
            "ClusterQueueSpec",
            "LocalQueueSpec",
            "QueueNotFound",
            "Quota",
            "ResourceFlavorSpec",
            "WorkloadPriorityClassSpec",
            "apply_all",
            "list_queues",
            "queue_status",
            "resolve_local_queue",
        ),
        "flarekit.ray": ("RayJobClient",),
    },
    _no_such_name,
)
