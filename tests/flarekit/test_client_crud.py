"""Typed CRUD against FakeCluster: every method returns models, and sends what it promises."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import warnings

import pytest
from client_support import cluster, fc, raycluster, raycluster_body  # noqa: F401

from flarekit import (
    ALL_NAMESPACES,
    AlreadyExists,
    ApiError,
    Client,
    Conflict,
    NotFound,
    ServerWarning,
)
from flarekit_models.kueue.v1beta2 import ResourceFlavor
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster


def test_create_and_get_return_models(client: Client, ns: str) -> None:
    created = client.create(raycluster("a", {"team": "x"}), namespace=ns)
    assert isinstance(created, RayCluster)
    assert created.metadata is not None and created.metadata.uid
    assert created.metadata.namespace == ns and created.metadata.resource_version
    got = client.get(RayCluster, "a", namespace=ns)
    assert isinstance(got, RayCluster)
    assert got.to_dict() == created.to_dict()
    assert got.spec is not None and got.spec.head_group_spec is not None


def test_namespace_comes_from_the_object_or_the_client_default(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    obj = raycluster("in-meta")
    assert obj.metadata is not None
    obj.metadata.namespace = ns
    client.create(obj)
    assert cluster.get("rayclusters", "in-meta", ns) is not None
    client.create(raycluster("in-default"))
    assert cluster.get("rayclusters", "in-default", client.namespace) is not None
    with pytest.raises(ValueError, match=r"metadata\.namespace"):
        client.create(obj, namespace="other")


def test_create_of_a_taken_name_is_already_exists(client: Client, ns: str) -> None:
    client.create(raycluster("dup"), namespace=ns)
    with pytest.raises(AlreadyExists):
        client.create(raycluster("dup", {"team": "other"}), namespace=ns)


def test_creating_the_same_object_again_returns_the_stored_one(client: Client, ns: str) -> None:
    first = client.create(raycluster("again"), namespace=ns)
    second = client.create(raycluster("again"), namespace=ns)
    assert first.metadata is not None and second.metadata is not None
    assert second.metadata.uid == first.metadata.uid


def test_replace_uses_resource_version_for_optimistic_concurrency(client: Client, ns: str) -> None:
    first = client.create(raycluster("r"), namespace=ns)
    assert first.spec is not None and first.metadata is not None
    first.spec.enable_in_tree_autoscaling = True
    second = client.replace(first)
    assert second.spec is not None and second.spec.enable_in_tree_autoscaling is True
    assert second.metadata is not None
    assert second.metadata.resource_version != first.metadata.resource_version
    with pytest.raises(Conflict) as info:
        client.replace(first)  # still carries the old resourceVersion
    assert info.value.verb == "update" and info.value.name == "r"


def test_merge_and_json_patch(client: Client, ns: str) -> None:
    client.create(raycluster("p"), namespace=ns)
    merged = client.patch(RayCluster, "p", {"metadata": {"labels": {"a": "1"}}}, namespace=ns)
    assert isinstance(merged, RayCluster)
    assert merged.metadata is not None and merged.metadata.labels == {"a": "1"}
    patched = client.patch(
        RayCluster,
        "p",
        [{"op": "add", "path": "/metadata/labels/b", "value": "2"}],
        namespace=ns,
        patch_type="json",
    )
    assert patched.metadata is not None and patched.metadata.labels == {"a": "1", "b": "2"}


def test_patch_arguments_are_checked_before_sending(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    before = len(cluster.requests)
    with pytest.raises(ValueError, match="'merge', 'json', 'apply'"):
        client.patch(RayCluster, "p", {}, namespace=ns, patch_type="strategic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"patch\[0\]\.op"):
        client.patch(RayCluster, "p", [{"op": "frob", "path": "/x"}], patch_type="json")
    with pytest.raises(ValueError, match="force"):
        client.patch(RayCluster, "p", {}, namespace=ns, force=True)
    with pytest.raises(ValueError, match="'Strict', 'Warn', 'Ignore'"):
        client.create(raycluster("x"), field_validation="strict")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="resource model class"):
        client.get(dict, "x")  # type: ignore[type-var]
    assert len(cluster.requests) == before


def test_server_side_apply_with_field_manager_and_force(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    applied = client.apply(raycluster("s"), namespace=ns, field_manager="alice")
    assert applied.metadata is not None and applied.metadata.managed_fields
    assert [m.manager for m in applied.metadata.managed_fields] == ["alice"]
    client.apply(raycluster("s", enableInTreeAutoscaling=True), namespace=ns, field_manager="bob")
    with pytest.raises(Conflict) as info:
        client.apply(
            raycluster("s", enableInTreeAutoscaling=False), namespace=ns, field_manager="alice"
        )
    assert [c.field for c in info.value.causes] == [".spec.enableInTreeAutoscaling"]
    assert info.value.causes[0].reason == "FieldManagerConflict"
    forced = client.apply(
        raycluster("s", enableInTreeAutoscaling=False),
        namespace=ns,
        field_manager="alice",
        force=True,
    )
    assert forced.spec is not None and forced.spec.enable_in_tree_autoscaling is False
    last = cluster.requests[-1]
    assert last.content_type == "application/apply-patch+yaml"
    assert last.param("fieldManager") == "alice" and last.param("force") == "true"


def test_apply_uses_the_client_field_manager_by_default(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    client.apply(raycluster("d"), namespace=ns)
    assert cluster.requests[-1].param("fieldManager") == client.field_manager


def test_delete_returns_none_once_gone(client: Client, ns: str) -> None:
    client.create(raycluster("gone"), namespace=ns)
    assert client.delete(RayCluster, "gone", namespace=ns, propagation_policy="Background") is None
    with pytest.raises(NotFound):
        client.get(RayCluster, "gone", namespace=ns)


def test_delete_preconditions(client: Client, ns: str) -> None:
    created = client.create(raycluster("pre"), namespace=ns)
    with pytest.raises(Conflict, match="Precondition failed"):
        client.delete(RayCluster, "pre", namespace=ns, uid="not-the-uid")
    with pytest.raises(Conflict, match="Precondition failed"):
        client.delete(RayCluster, "pre", namespace=ns, resource_version="1")
    assert created.metadata is not None
    meta = created.metadata
    client.delete(
        RayCluster, "pre", namespace=ns, uid=meta.uid, resource_version=meta.resource_version
    )
    with pytest.raises(ValueError, match="'Foreground', 'Background', 'Orphan'"):
        client.delete(RayCluster, "pre", namespace=ns, propagation_policy="Now")  # type: ignore[arg-type]


def test_delete_with_finalizer_returns_the_terminating_object(client: Client, ns: str) -> None:
    obj = raycluster("fin")
    assert obj.metadata is not None
    obj.metadata.finalizers = ["example.com/hold"]
    client.create(obj, namespace=ns)
    terminating = client.delete(RayCluster, "fin", namespace=ns)
    assert isinstance(terminating, RayCluster)
    assert terminating.metadata is not None and terminating.metadata.deletion_timestamp


def test_dry_run_writes_nothing(cluster: FakeCluster, client: Client, ns: str) -> None:
    answer = client.create(raycluster("dry"), namespace=ns, dry_run=True)
    assert isinstance(answer, RayCluster)
    assert cluster.requests[-1].param("dryRun") == "All"
    assert cluster.get("rayclusters", "dry", ns) is None
    client.create(raycluster("dry"), namespace=ns)
    client.delete(RayCluster, "dry", namespace=ns, dry_run=True)
    assert cluster.get("rayclusters", "dry", ns) is not None


def test_field_validation_warn_surfaces_a_server_warning(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    with pytest.warns(ServerWarning, match='unknown field "spec.bogus"'):
        client.create(raycluster("w", bogus=1), namespace=ns, field_validation="Warn")
    assert cluster.requests[-1].param("fieldValidation") == "Warn"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client.create(raycluster("i", bogus=1), namespace=ns, field_validation="Ignore")


def test_field_validation_strict_rejects_unknown_fields(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    with pytest.raises(ApiError) as info:
        client.create(raycluster("strict", bogus=1), namespace=ns, field_validation="Strict")
    assert type(info.value) is ApiError  # 400 BadRequest has no narrower class
    assert info.value.reason == "BadRequest" and 'unknown field "spec.bogus"' in info.value.message
    assert cluster.get("rayclusters", "strict", ns) is None


def test_status_subresource(cluster: FakeCluster, client: Client, ns: str) -> None:
    client.create(raycluster("st"), namespace=ns)
    patched = client.patch_status(RayCluster, "st", {"status": {"state": "ready"}}, namespace=ns)
    assert patched.status is not None and patched.status.state == "ready"
    assert cluster.requests[-1].path.endswith("/rayclusters/st/status")
    read = client.get_status(RayCluster, "st", namespace=ns)
    assert read.status is not None and read.status.state == "ready"
    read.status.state = "suspended"
    assert read.spec is not None
    read.spec.enable_in_tree_autoscaling = True  # ignored: the status endpoint keeps the spec
    replaced = client.replace_status(read)
    assert replaced.status is not None and replaced.status.state == "suspended"
    assert replaced.spec is not None and replaced.spec.enable_in_tree_autoscaling is None


def test_status_of_a_kind_without_the_subresource_is_refused(client: Client) -> None:
    with pytest.raises(ValueError, match="no 'status' subresource"):
        client.get_status(ResourceFlavor, "f")


def test_cluster_scoped_kinds(client: Client) -> None:
    created = client.create(ResourceFlavor.model_validate({"metadata": {"name": "cpu"}}))
    assert created.metadata is not None and created.metadata.namespace is None
    assert client.get(ResourceFlavor, "cpu").metadata is not None
    assert "cpu" in [f.metadata.name for f in client.list(ResourceFlavor) if f.metadata]
    with pytest.raises(ValueError, match="cluster-scoped"):
        client.get(ResourceFlavor, "cpu", namespace="default")


def test_unknown_fields_round_trip(cluster: FakeCluster, client: Client, ns: str) -> None:
    body = raycluster_body("extra")
    body["metadata"]["annotations"] = {"note": "kept"}
    cluster.create({**body, "metadata": {**body["metadata"], "namespace": ns}})
    got = client.get(RayCluster, "extra", namespace=ns)
    assert got.to_dict()["metadata"]["annotations"] == {"note": "kept"}
    assert cluster.get("rayclusters", "extra", ns) == got.to_dict()


def test_all_namespaces_only_for_list_and_watch(client: Client) -> None:
    with pytest.raises(ValueError, match="only allowed for list and watch"):
        client.get(RayCluster, "a", namespace=ALL_NAMESPACES)
