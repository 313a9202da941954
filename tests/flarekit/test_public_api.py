"""The public names of flarekit: a deliberate list, and a cheap import.

Changing what `flarekit` exports is an API change; this test makes it a visible one.
"""

from __future__ import annotations

import subprocess
import sys

import flarekit
import flarekit.client
import flarekit.cluster

PUBLIC = [
    "negotiate",
    "ServerReleases",
    "FieldUnavailable",
    "PrunedFieldsWarning",
    "PrunedFields",
    "ALL_NAMESPACES",
    "AdmissionState",
    "AlreadyExists",
    "ApiError",
    "ApiUnavailable",
    "CASecretInvalid",
    "CASecretNotFound",
    "Cause",
    "Client",
    "Cluster",
    "ClusterConfiguration",
    "ClusterDetails",
    "ClusterQueueSpec",
    "ClusterState",
    "ClusterStatus",
    "ConfigError",
    "Conflict",
    "Credentials",
    "DashboardNotExposed",
    "DistributedJob",
    "ObjectChange",
    "Plan",
    "FieldValidation",
    "Forbidden",
    "Gone",
    "InsecureConnectionWarning",
    "Invalid",
    "JobState",
    "JobStatus",
    "KubeconfigError",
    "ListIterator",
    "PortForward",
    "PortForwardError",
    "LocalQueueSpec",
    "NotFound",
    "NotServed",
    "PatchType",
    "Problem",
    "PropagationPolicy",
    "QueueNotFound",
    "Quota",
    "RayClientTLS",
    "RayClientUnavailable",
    "RayJob",
    "RayJobClient",
    "RayJobError",
    "RayJobStatus",
    "ReadLimits",
    "ResourceFlavorSpec",
    "RetryPolicy",
    "Runtime",
    "RuntimeNotFound",
    "ServerError",
    "ServerWarning",
    "TerminalFailure",
    "TrainJob",
    "Unauthorized",
    "WaitTimeout",
    "Watch",
    "WatchEvent",
    "WorkerGroup",
    "WorkloadPriorityClassSpec",
    "apply_all",
    "current_credentials",
    "from_kubeconfig",
    "from_token",
    "generate_tls_cert",
    "get_cluster",
    "get_runtime",
    "in_cluster",
    "list_all_clusters",
    "list_all_queued",
    "list_queues",
    "list_runtimes",
    "login",
    "logout",
    "queue_status",
    "resolve_local_queue",
]


def test_public_names_are_exactly_these() -> None:
    assert sorted(flarekit.__all__) == sorted(PUBLIC)


def test_client_names_are_all_public() -> None:
    assert set(flarekit.client.__all__) <= set(PUBLIC)


def test_every_public_name_resolves() -> None:
    for name in PUBLIC:
        value = getattr(flarekit, name)
        if isinstance(value, type) or (callable(value) and hasattr(value, "__code__")):
            assert value.__name__ == name, name  # classes and functions keep their names
    assert flarekit.NotFound is flarekit.client.NotFound
    assert flarekit.ConfigError is flarekit.cluster.ConfigError


def test_names_users_carry_over_say_what_to_use() -> None:
    import pytest

    with pytest.raises(AttributeError, match=r"use flarekit\.from_kubeconfig"):
        flarekit.KubeConfigFileAuthentication  # noqa: B018
    with pytest.raises(AttributeError, match="did you mean Cluster "):
        flarekit.Clustr  # noqa: B018


def test_the_names_are_listed_once() -> None:
    # The lazy loader reads the TYPE_CHECKING imports of flarekit/__init__.py: nothing else
    # in that file may list a public name again.
    from pathlib import Path

    source = Path(flarekit.__file__).read_text(encoding="utf-8")
    for name in PUBLIC:
        assert source.count(f"{name} as {name},") == 1, name
        assert source.count(f'"{name}"') == 0, name


def test_unknown_attributes_still_fail() -> None:
    try:
        flarekit.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("flarekit.NoSuchThing resolved")


def test_importing_flarekit_does_not_load_the_kubernetes_package() -> None:
    code = (
        "import sys, flarekit\n"
        "assert 'kubernetes' not in sys.modules and 'pydantic' not in sys.modules\n"
        "from flarekit import Client, NotFound, RetryPolicy\n"
        "assert 'kubernetes' not in sys.modules, 'kubernetes loaded before a client exists'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
