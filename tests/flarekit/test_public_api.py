"""The public names of flarekit: a deliberate list, and a cheap import.

Changing what `flarekit` exports is an API change; this test makes it a visible one.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

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


def test_the_facade_takes_client_names_from_the_client_package() -> None:
    # flarekit.client is the typed client's contract, for users and for the facade's own
    # packages; flarekit re-exports the part a user of the facade needs.
    from_client = {name for name in PUBLIC if getattr(flarekit.client, name, None) is not None}
    assert from_client <= set(flarekit.client.__all__)
    assert {"Client", "NotFound", "Watch"} <= from_client


def test_every_public_name_resolves() -> None:
    for name in PUBLIC:
        value = getattr(flarekit, name)
        if isinstance(value, type) or (callable(value) and hasattr(value, "__code__")):
            assert value.__name__ == name, name  # classes and functions keep their names
    assert flarekit.NotFound is flarekit.client.NotFound
    assert flarekit.ConfigError is flarekit.cluster.ConfigError


def test_names_users_carry_over_say_what_to_use() -> None:
    with pytest.raises(AttributeError, match=r"use flarekit\.from_kubeconfig"):
        flarekit.KubeConfigFileAuthentication  # noqa: B018
    with pytest.raises(AttributeError, match="did you mean Cluster "):
        flarekit.Clustr  # noqa: B018


LAZY_PACKAGES = [
    "flarekit",
    "flarekit.client",
    "flarekit.cluster",
    "flarekit.compat",
    "flarekit.job",
    "flarekit.kueue",
    "flarekit.ray",
    "flarekit.walkthrough",
]


def _type_checking_imports(module: str) -> dict[str, str]:
    """Name -> defining module, from the ``if TYPE_CHECKING:`` block of `module`'s file."""
    import ast
    import importlib
    from pathlib import Path

    path = Path(str(importlib.import_module(module).__file__))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
    )
    return {
        alias.asname or alias.name: str(node.module)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_what_type_checkers_read_is_what_loads(package: str) -> None:
    # A lazy package lists its names twice, for the loader and for type checkers: the two
    # lists name the same things, from the same modules.
    import importlib

    module = importlib.import_module(package)
    declared = _type_checking_imports(package)
    assert sorted(declared) == sorted(module.__all__)
    for name, source in declared.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), name), name


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
