"""The one place that knows which API servers the contract suite talks to.

Every test runs twice: against an in-process FakeCluster and against the real control plane
(`control_plane`, see tests/conftest.py), both serving the default upstream releases. Where
they disagree, the real server is right. With `FLAREKIT_TEST_KUBECONFIG=/path/to/kubeconfig`
the suite runs a third time, against that cluster: every test gets a fresh, uniquely named
namespace that is deleted afterwards,
cluster-scoped objects carry a per-run label and unique names and are deleted too, and the
suite is skipped unless the CRDs it uses are installed. Tests see only `cluster`: an API
client, their namespace, and the served version of an API group.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from contract_backend import ENV, RUN_LABEL, Backend, Cluster

from flarekit_testing import ControlPlane, FakeCluster

#: The CRDs the suite creates objects of; a real cluster must have them installed.
REQUIRED_CRDS = ("resourceflavors.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io")


def _served(client: Any, name: str) -> bool:
    """Whether discovery lists the resource `plural.group` (any version): reading CRDs
    themselves needs cluster-wide rights that a tester may not have."""
    plural, _, group = name.partition(".")
    try:
        found = kubernetes.client.ApisApi(client).get_api_versions()
    except kubernetes.client.ApiException:
        return False
    for api_group in found.groups:
        if api_group.name != group:
            continue
        for version in api_group.versions:
            path = f"/apis/{group}/{version.version}"
            listing = client.call_api(
                path,
                "GET",
                response_type="object",
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
            )
            if any(r.get("name") == plural for r in listing.get("resources", [])):
                return True
    return False


def _real_backend(path: str) -> Backend:
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=path, client_configuration=configuration)
    client = kubernetes.client.ApiClient(configuration)
    missing = [name for name in REQUIRED_CRDS if not _served(client, name)]
    if missing:
        client.close()
        pytest.skip(
            f"{ENV} cluster does not serve the CRDs this suite needs: {', '.join(missing)} "
            "(install Kueue, or unset the variable to run against FakeCluster)"
        )
    return Backend(client, real=True, name="kubeconfig")


BACKENDS = ["fakecluster", "controlplane"] + (["kubeconfig"] if os.environ.get(ENV) else [])


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "kubeconfig":
        found = _real_backend(os.environ[ENV])
        yield found
        found.client.close()
        return
    if request.param == "controlplane":
        plane: ControlPlane = request.getfixturevalue("control_plane")
        client = plane.api_client()
        yield Backend(client, real=True, name="controlplane")
        client.close()
        return
    with FakeCluster() as fake:
        client = fake.api_client()
        yield Backend(client, real=False, name="fakecluster")
        client.close()


@pytest.fixture
def cluster(backend: Backend) -> Iterator[Cluster]:
    core = kubernetes.client.CoreV1Api(backend.client)
    name = f"flarekit-contract-{backend.run_id}-{uuid.uuid4().hex[:6]}"
    core.create_namespace(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {RUN_LABEL: backend.run_id}},
        }
    )
    found = Cluster(backend, name)
    try:
        yield found
    finally:
        api = kubernetes.client.CustomObjectsApi(backend.client)
        for group, plural, obj_name in found.created:
            version = backend.version(group)
            try:
                api.patch_cluster_custom_object(
                    group, version, plural, obj_name, {"metadata": {"finalizers": None}}
                )
                api.delete_cluster_custom_object(group, version, plural, obj_name)
            except kubernetes.client.ApiException as exc:
                if exc.status != 404:
                    raise
        core.delete_namespace(name)
