"""A server whose CRD is older than the models drops fields of a write: the client says so.

KubeRay v1.1.1's RayCluster CRD has no `spec.gcsFaultToleranceOptions` (added in v1.3) and no
`workerGroupSpecs[].idleTimeoutSeconds`, which the models (from the newest release) have;
FakeCluster prunes them as kube-apiserver does.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from client_support import raycluster

from flarekit import Client, ServerWarning, from_kubeconfig
from flarekit.client._dropped import PrunedFields, PrunedFieldsWarning
from flarekit_models.ray.v1 import RayCluster, WorkerGroupSpec
from flarekit_testing import ControlPlane, FakeCluster
from kube_support import new_namespace

GCS = {"redisAddress": "redis:6379"}
WORKER = {
    "groupName": "w",
    "replicas": 1,
    "rayStartParams": {},
    "idleTimeoutSeconds": 60,
    "template": {"spec": {"containers": [{"name": "ray-worker", "image": "rayproject/ray"}]}},
}


@pytest.fixture(scope="module")
def old_kuberay() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kuberay": "v1.1.1"}) as fc:
        yield fc


@pytest.fixture()
def ns(old_kuberay: FakeCluster) -> str:
    return new_namespace(old_kuberay)


@pytest.fixture(scope="module")
def client(old_kuberay: FakeCluster) -> Iterator[Client]:
    with Client(from_kubeconfig(old_kuberay.kubeconfig_path)) as c:
        yield c


def stored(fc: FakeCluster, ns: str, name: str) -> dict[str, Any]:
    api = kubernetes.client.CustomObjectsApi(fc.api_client())
    obj: dict[str, Any] = api.get_namespaced_custom_object("ray.io", "v1", ns, "rayclusters", name)
    return obj


def caught_warnings(action: Any) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return caught


def test_a_pruned_field_is_one_warning_naming_its_path(
    old_kuberay: FakeCluster, client: Client, ns: str
) -> None:
    caught = caught_warnings(
        lambda: client.create(raycluster("gcs", gcsFaultToleranceOptions=GCS), namespace=ns)
    )
    [warning] = caught  # the server's own "unknown field" warning is folded into this one
    assert warning.category is PrunedFieldsWarning
    assert isinstance(warning.message, PrunedFieldsWarning)
    assert warning.message.paths == ["spec.gcsFaultToleranceOptions"]
    assert f'create rayclusters.ray.io "gcs" in namespace "{ns}"' in str(warning.message)
    assert warning.filename == __file__
    assert "gcsFaultToleranceOptions" not in stored(old_kuberay, ns, "gcs")["spec"]


def test_a_field_of_a_list_item_is_named_with_its_index(client: Client, ns: str) -> None:
    created = client.create(raycluster("idle"), namespace=ns)
    assert created.spec is not None
    patch = {"spec": {"workerGroupSpecs": [WORKER]}}
    with pytest.warns(PrunedFieldsWarning) as caught:
        client.patch(RayCluster, "idle", patch, namespace=ns)
    [warning] = [w for w in caught if w.category is PrunedFieldsWarning]
    assert isinstance(warning.message, PrunedFieldsWarning)
    assert warning.message.paths == ["spec.workerGroupSpecs[0].idleTimeoutSeconds"]


def test_apply_and_replace_are_checked_too(client: Client, ns: str) -> None:
    with pytest.warns(PrunedFieldsWarning, match=r"spec\.gcsFaultToleranceOptions"):
        client.apply(raycluster("applied", gcsFaultToleranceOptions=GCS), namespace=ns)
    current = client.get(RayCluster, "applied", namespace=ns)
    assert current.spec is not None
    current.spec.worker_group_specs = [WorkerGroupSpec.model_validate(WORKER)]
    with pytest.warns(PrunedFieldsWarning, match=r"workerGroupSpecs\[0\]\.idleTimeoutSeconds"):
        client.replace(current)


def test_writes_that_keep_everything_do_not_warn(client: Client, ns: str) -> None:
    def write() -> None:
        client.create(raycluster("plain"), namespace=ns)
        client.patch(RayCluster, "plain", {"metadata": {"labels": {"a": "b"}}}, namespace=ns)
        client.patch_status(RayCluster, "plain", {"status": {"state": "ready"}}, namespace=ns)

    assert caught_warnings(write) == []


def test_explicit_warn_leaves_it_to_the_server_and_ignore_is_quiet(client: Client, ns: str) -> None:
    body = raycluster("warned", gcsFaultToleranceOptions=GCS)
    caught = caught_warnings(lambda: client.create(body, namespace=ns, field_validation="Warn"))
    assert [(w.category, str(w.message)) for w in caught] == [
        (ServerWarning, 'unknown field "spec.gcsFaultToleranceOptions"')
    ]
    body = raycluster("ignored", gcsFaultToleranceOptions=GCS)
    assert (
        caught_warnings(lambda: client.create(body, namespace=ns, field_validation="Ignore")) == []
    )


def test_strict_fields_raises_after_the_write_and_says_so(
    old_kuberay: FakeCluster, ns: str
) -> None:
    with Client(from_kubeconfig(old_kuberay.kubeconfig_path), strict_fields=True) as strict:
        with pytest.raises(PrunedFields) as info:
            strict.create(raycluster("strict", gcsFaultToleranceOptions=GCS), namespace=ns)
        assert info.value.paths == ["spec.gcsFaultToleranceOptions"]
        assert "was created without them" in str(info.value)
        assert "client.delete" in str(info.value)
        assert isinstance(info.value.obj, RayCluster) and info.value.obj.metadata is not None
        assert info.value.obj.metadata.name == "strict"
        assert "gcsFaultToleranceOptions" not in stored(old_kuberay, ns, "strict")["spec"]
        # per call, either way
        strict.create(raycluster("relaxed", gcsFaultToleranceOptions=GCS), namespace=ns,
                      strict_fields=False, field_validation="Ignore")  # fmt: skip


def test_strict_fields_per_call_covers_ignore_and_status(client: Client, ns: str) -> None:
    body = raycluster("per-call", gcsFaultToleranceOptions=GCS)
    with pytest.raises(PrunedFields, match=r"spec\.gcsFaultToleranceOptions"):
        client.create(body, namespace=ns, field_validation="Ignore", strict_fields=True)
    with pytest.raises(PrunedFields) as info:
        client.patch_status(
            RayCluster, "per-call", {"status": {"state": "ready", "bogus": 1}},
            namespace=ns, strict_fields=True,
        )  # fmt: skip
    assert info.value.paths == ["status.bogus"]
    assert "was patched without them" in str(info.value)


def test_json_patch_is_checked(client: Client, ns: str) -> None:
    client.create(raycluster("jp"), namespace=ns)
    ops = [{"op": "add", "path": "/spec/gcsFaultToleranceOptions", "value": GCS}]
    with pytest.raises(PrunedFields) as info:
        client.patch(RayCluster, "jp", ops, namespace=ns, patch_type="json", strict_fields=True)
    assert info.value.paths == ["spec.gcsFaultToleranceOptions"]


def test_a_field_named_outside_latin_1_is_named_as_written(
    backend: FakeCluster | ControlPlane,
) -> None:
    """The server's warning names it in UTF-8 (read as such, not as Latin-1), on both servers;
    FakeCluster used to drop the connection after storing the object."""
    namespace = new_namespace(backend)
    with Client(from_kubeconfig(backend.kubeconfig_path)) as client:
        body = raycluster("script", **{"字段": 1})
        caught = caught_warnings(lambda: client.create(body, namespace=namespace))
        pruned = [w.message for w in caught if isinstance(w.message, PrunedFieldsWarning)]
        assert [p.paths for p in pruned] == [["spec[字段]"]]  # a key beyond [A-Za-z0-9_]
        warned = raycluster("warned", **{"字段": 1})
        caught = caught_warnings(
            lambda: client.create(warned, namespace=namespace, field_validation="Warn")
        )
    assert [str(w.message) for w in caught] == ['unknown field "spec.字段"']
