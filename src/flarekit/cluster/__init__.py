"""Ray clusters described in a few parameters, rendered to KubeRay objects offline.

``ClusterConfiguration`` holds what a user wants (CodeFlare SDK parameter names),
validates all of it at once (:class:`ConfigError` lists every problem), and renders to a
``RayCluster`` (ray.io/v1), optionally wrapped in an ``AppWrapper``, as typed models, dicts
or YAML, without credentials or a cluster. :func:`from_raycluster` reads a configuration
back from an existing object. :meth:`Cluster.local_client_url` and
:func:`generate_tls_cert` connect a Ray client to a running cluster, with mTLS where the
platform requires it.
"""

from flarekit._validation import ConfigError, Problem, ValidationReport
from flarekit._wait import TerminalFailure, WaitTimeout
from flarekit.cluster._client_tls import (
    CASecretInvalid,
    CASecretNotFound,
    RayClientTLS,
    export_env,
    generate_tls_cert,
    remove_tls_cert,
    tls_base_dir,
)
from flarekit.cluster._client_url import RayClientUnavailable
from flarekit.cluster._cluster import Cluster, LabelsDropped
from flarekit.cluster._config import ClusterConfiguration, WorkerGroup
from flarekit.cluster._dashboard import DashboardNotExposed
from flarekit.cluster._details import ClusterDetails
from flarekit.cluster._lookup import ClusterList, get_cluster, list_all_clusters, list_all_queued
from flarekit.cluster._read import from_raycluster
from flarekit.cluster._render import (
    render,
    render_appwrapper,
    render_raycluster,
    to_dict,
    to_yaml,
)
from flarekit.cluster._status import ClusterState, ClusterStatus

__all__ = [
    "CASecretInvalid",
    "CASecretNotFound",
    "Cluster",
    "ClusterConfiguration",
    "ClusterDetails",
    "ClusterList",
    "ClusterState",
    "ClusterStatus",
    "ConfigError",
    "DashboardNotExposed",
    "LabelsDropped",
    "Problem",
    "RayClientTLS",
    "RayClientUnavailable",
    "TerminalFailure",
    "ValidationReport",
    "WaitTimeout",
    "WorkerGroup",
    "export_env",
    "from_raycluster",
    "generate_tls_cert",
    "get_cluster",
    "list_all_clusters",
    "list_all_queued",
    "remove_tls_cert",
    "render",
    "render_appwrapper",
    "render_raycluster",
    "tls_base_dir",
    "to_dict",
    "to_yaml",
]
