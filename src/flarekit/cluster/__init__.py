"""Ray clusters described in a few parameters, rendered to KubeRay objects offline.

``ClusterConfiguration`` holds what a user wants (CodeFlare SDK parameter names),
validates all of it at once (:class:`ConfigError` lists every problem), and renders to a
``RayCluster`` (ray.io/v1), optionally wrapped in an ``AppWrapper``, as typed models, dicts
or YAML, without credentials or a cluster. :func:`from_raycluster` reads a configuration
back from an existing object. :meth:`Cluster.local_client_url` and
:func:`generate_tls_cert` connect a Ray client to a running cluster, with mTLS where the
platform requires it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit._validation import ConfigError as ConfigError
    from flarekit._validation import Problem as Problem
    from flarekit._validation import ValidationReport as ValidationReport
    from flarekit._wait import TerminalFailure as TerminalFailure
    from flarekit._wait import WaitTimeout as WaitTimeout
    from flarekit.cluster._client_tls import CASecretInvalid as CASecretInvalid
    from flarekit.cluster._client_tls import CASecretNotFound as CASecretNotFound
    from flarekit.cluster._client_tls import RayClientTLS as RayClientTLS
    from flarekit.cluster._client_tls import export_env as export_env
    from flarekit.cluster._client_tls import generate_tls_cert as generate_tls_cert
    from flarekit.cluster._client_tls import remove_tls_cert as remove_tls_cert
    from flarekit.cluster._client_tls import tls_base_dir as tls_base_dir
    from flarekit.cluster._cluster import Cluster as Cluster
    from flarekit.cluster._config import ClusterConfiguration as ClusterConfiguration
    from flarekit.cluster._config import WorkerGroup as WorkerGroup
    from flarekit.cluster._details import ClusterDetails as ClusterDetails
    from flarekit.cluster._endpoints import DEFAULT_DASHBOARD_PORT as DEFAULT_DASHBOARD_PORT
    from flarekit.cluster._endpoints import DashboardNotExposed as DashboardNotExposed
    from flarekit.cluster._endpoints import RayClientUnavailable as RayClientUnavailable
    from flarekit.cluster._lookup import ClusterList as ClusterList
    from flarekit.cluster._lookup import find_clusters as find_clusters
    from flarekit.cluster._lookup import get_cluster as get_cluster
    from flarekit.cluster._lookup import list_all_clusters as list_all_clusters
    from flarekit.cluster._lookup import list_all_queued as list_all_queued
    from flarekit.cluster._prechecks import LabelsDropped as LabelsDropped
    from flarekit.cluster._read import from_raycluster as from_raycluster
    from flarekit.cluster._render import render as render
    from flarekit.cluster._render import render_appwrapper as render_appwrapper
    from flarekit.cluster._render import render_raycluster as render_raycluster
    from flarekit.cluster._render import to_dict as to_dict
    from flarekit.cluster._render import to_yaml as to_yaml
    from flarekit.cluster._status import ClusterState as ClusterState
    from flarekit.cluster._status import ClusterStatus as ClusterStatus
    from flarekit.cluster._status import head_service_name as head_service_name
    from flarekit.cluster._wrapper import appwrapper_kind as appwrapper_kind

__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit._validation": (
            "ConfigError",
            "Problem",
            "ValidationReport",
        ),
        "flarekit._wait": (
            "TerminalFailure",
            "WaitTimeout",
        ),
        "flarekit.cluster._client_tls": (
            "CASecretInvalid",
            "CASecretNotFound",
            "RayClientTLS",
            "export_env",
            "generate_tls_cert",
            "remove_tls_cert",
            "tls_base_dir",
        ),
        "flarekit.cluster._cluster": ("Cluster",),
        "flarekit.cluster._prechecks": ("LabelsDropped",),
        "flarekit.cluster._config": (
            "ClusterConfiguration",
            "WorkerGroup",
        ),
        "flarekit.cluster._endpoints": (
            "DEFAULT_DASHBOARD_PORT",
            "DashboardNotExposed",
            "RayClientUnavailable",
        ),
        "flarekit.cluster._details": ("ClusterDetails",),
        "flarekit.cluster._lookup": (
            "ClusterList",
            "find_clusters",
            "get_cluster",
            "list_all_clusters",
            "list_all_queued",
        ),
        "flarekit.cluster._read": ("from_raycluster",),
        "flarekit.cluster._render": (
            "render",
            "render_appwrapper",
            "render_raycluster",
            "to_dict",
            "to_yaml",
        ),
        "flarekit.cluster._status": (
            "ClusterState",
            "ClusterStatus",
            "head_service_name",
        ),
        "flarekit.cluster._wrapper": ("appwrapper_kind",),
    },
)
