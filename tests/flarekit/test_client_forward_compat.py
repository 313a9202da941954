"""Objects from a server newer than the models keep their unknown fields through the client.

The CRDs served here are the pinned ones with extra properties added (as a later release of
the operator would add them): at the root, in `spec`, in a list item, in a map value, inside
an embedded core type (a container and its resources) and in `status`. Objects carrying
values for all of them are seeded, read with the typed client, changed in a field the models
know, and written back by replace, status replace/patch and server-side apply; then read
through plain `CustomObjectsApi` to compare every unknown field exactly (types included:
`1.0` stays a float, nulls inside values stay).
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import kubernetes
import pytest

from flarekit import Client, from_kubeconfig
from flarekit.client._codec import dump_apply
from flarekit_models._crds import crds_for
from flarekit_models.kubeflow.v1 import PyTorchJob
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster

#: A value with every JSON type, nesting, nulls and awkward strings.
FUTURE: dict[str, Any] = {
    "list": [1, 2.5, "x", None, True, {"nested": {}}],
    "float": 1.0,
    "int": -9007199254740993,
    "text": 'ünï \u2028 "quoted" \\',
    "empty": [],
    "object": {"deep": {"deeper": [{"k": "v"}]}},
    "null": None,
}
#: FUTURE without its null member: in a merge patch (how status is seeded here) and in an
#: applied configuration, a null member of an object means "remove this field".
STATUS_FUTURE = {k: v for k, v in FUTURE.items() if v is not None}
ANY: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}

#: (schema path, new property name) per depth; "[]" is a list item, "{}" a map value.
RAY_FIELDS = [
    ((), "futureRoot"),
    (("spec",), "futureSpec"),
    (("spec", "workerGroupSpecs", "[]"), "futureGroup"),
    (("spec", "headGroupSpec", "template", "spec", "containers", "[]"), "futureContainer"),
    (
        ("spec", "headGroupSpec", "template", "spec", "containers", "[]", "resources"),
        "futureResources",
    ),
    (("status",), "futureStatus"),
    (("status", "conditions", "[]"), "futureCondition"),
]
PYTORCH_FIELDS = [
    (("spec", "pytorchReplicaSpecs", "{}"), "futureReplica"),
    (("spec", "pytorchReplicaSpecs", "{}", "template", "spec"), "futurePod"),
]


def add_property(crd: dict[str, Any], path: tuple[str, ...], name: str) -> None:
    """Declare `name` at `path` in the v1 schema of `crd` (the version the models read)."""
    for version in [v for v in crd["spec"]["versions"] if v["name"] == "v1"]:
        node = version["schema"]["openAPIV3Schema"]
        for part in path:
            if part == "[]":
                node = node["items"]
            elif part == "{}":
                node = node["additionalProperties"]
            else:
                node = node["properties"][part]
        node.setdefault("properties", {})[name] = copy.deepcopy(ANY)


def newer(family: str, tag: str, kind: str, fields: list[tuple[tuple[str, ...], str]]) -> Any:
    [crd] = [c for c in crds_for({family: tag}) if c["spec"]["names"]["kind"] == kind]
    for path, name in fields:
        add_property(crd, path, name)
    return crd


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    crds = [
        newer("kuberay", "v1.7.0", "RayCluster", RAY_FIELDS),
        newer("training-operator", "v1.9.4", "PyTorchJob", PYTORCH_FIELDS),
    ]
    with FakeCluster(crds=crds) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(fc: FakeCluster) -> Iterator[Client]:
    with Client(from_kubeconfig(fc.kubeconfig_path), strict_fields=True) as c:
        yield c


def container(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "ray-head",
        "image": "rayproject/ray",
        "futureContainer": value,
        "resources": {"limits": {"cpu": "1"}, "futureResources": value},
    }


def raycluster(name: str, namespace: str, value: dict[str, Any]) -> dict[str, Any]:
    worker = {
        "groupName": "w",
        "replicas": 1,
        "rayStartParams": {},
        "template": {"spec": {"containers": [{"name": "w", "image": "rayproject/ray"}]}},
        "futureGroup": value,
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "futureRoot": value,
        "spec": {
            "futureSpec": value,
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container(value)]}}},
            "workerGroupSpecs": [worker],
        },
    }  # fmt: skip


RAY_STATUS = {
    "state": "ready",
    "futureStatus": STATUS_FUTURE,
    "conditions": [
        {
            "type": "HeadPodReady",
            "status": "True",
            "reason": "HeadPodRunningAndReady",
            "message": "",
            "lastTransitionTime": "2025-01-01T00:00:00Z",
            "futureCondition": STATUS_FUTURE,
        }
    ],
}


def unknown_ray_fields(obj: dict[str, Any]) -> dict[str, str]:
    """Each unknown field's value as canonical JSON (so 1 and 1.0 differ)."""
    spec, status = obj["spec"], obj.get("status") or {}
    head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    values = {
        "root": obj.get("futureRoot"),
        "spec": spec.get("futureSpec"),
        "list item": spec["workerGroupSpecs"][0].get("futureGroup"),
        "container": head.get("futureContainer"),
        "container resources": head["resources"].get("futureResources"),
        "status": status.get("futureStatus"),
        "status list item": (status.get("conditions") or [{}])[0].get("futureCondition"),
    }
    return {k: json.dumps(v, sort_keys=True) for k, v in values.items()}


def raw(fc: FakeCluster, plural: str, group: str, ns: str, name: str) -> dict[str, Any]:
    api = kubernetes.client.CustomObjectsApi(fc.api_client())
    obj: dict[str, Any] = api.get_namespaced_custom_object(group, "v1", ns, plural, name)
    return obj


def seed_raycluster(
    fc: FakeCluster, ns: str, name: str, value: dict[str, Any] = FUTURE
) -> dict[str, str]:
    fc.create(raycluster(name, ns, value))
    fc.set_status("rayclusters", name, RAY_STATUS, ns)
    before = unknown_ray_fields(raw(fc, "rayclusters", "ray.io", ns, name))
    for key, got in before.items():
        assert got == json.dumps(STATUS_FUTURE if "status" in key else value, sort_keys=True)
    return before


def quietly(write: Callable[[], Any]) -> None:
    """Run a write, failing on any warning (a dropped field would be one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write()


def write_replace(client: Client, obj: RayCluster) -> None:
    assert obj.spec is not None
    obj.spec.enable_in_tree_autoscaling = True
    client.replace(obj)


def write_apply(client: Client, obj: RayCluster) -> None:
    assert obj.spec is not None
    obj.spec.enable_in_tree_autoscaling = True
    client.apply(obj, force=True)


def write_replace_status(client: Client, obj: RayCluster) -> None:
    assert obj.status is not None
    obj.status.state = "suspended"
    client.replace_status(obj)


def write_patch_status(client: Client, obj: RayCluster) -> None:
    assert obj.status is not None and obj.metadata is not None
    obj.status.state = "suspended"
    client.patch_status(RayCluster, str(obj.metadata.name), obj, namespace=obj.metadata.namespace)


@pytest.mark.parametrize(
    "write", [write_replace, write_apply, write_replace_status, write_patch_status]
)
def test_unknown_fields_survive_get_modify_write(
    fc: FakeCluster, client: Client, write: Callable[[Client, RayCluster], None], ns: str
) -> None:
    # null members are "remove" to server-side apply (see STATUS_FUTURE)
    before = seed_raycluster(fc, ns, "rc", STATUS_FUTURE if write is write_apply else FUTURE)
    obj = client.get(RayCluster, "rc", namespace=ns)
    quietly(lambda: write(client, obj))
    after = raw(fc, "rayclusters", "ray.io", ns, "rc")
    assert unknown_ray_fields(after) == before
    if write in (write_replace, write_apply):
        assert after["spec"]["enableInTreeAutoscaling"] is True
    else:
        assert after["status"]["state"] == "suspended"


def test_a_second_round_trip_changes_nothing_else(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_raycluster(fc, ns, "twice")
    first = raw(fc, "rayclusters", "ray.io", ns, "twice")
    for _ in range(2):
        quietly(lambda: client.replace(client.get(RayCluster, "twice", namespace=ns)))
    second = raw(fc, "rayclusters", "ray.io", ns, "twice")
    for meta in (first["metadata"], second["metadata"]):
        meta.pop("managedFields", None)
    assert json.dumps(second, sort_keys=True) == json.dumps(first, sort_keys=True)


def test_unknown_fields_in_a_map_value_survive(fc: FakeCluster, client: Client, ns: str) -> None:
    pod = {"containers": [{"name": "pytorch", "image": "pytorch/pytorch"}], "futurePod": FUTURE}
    replica = {"replicas": 1, "template": {"spec": pod}, "futureReplica": FUTURE}
    fc.create(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "pt", "namespace": ns},
            "spec": {"pytorchReplicaSpecs": {"Master": replica}},
        }
    )
    job = client.get(PyTorchJob, "pt", namespace=ns)
    assert job.spec is not None
    job.spec.nproc_per_node = "2"
    quietly(lambda: client.replace(job))
    master = raw(fc, "pytorchjobs", "kubeflow.org", ns, "pt")["spec"]["pytorchReplicaSpecs"][
        "Master"
    ]
    assert json.dumps(master["futureReplica"], sort_keys=True) == json.dumps(FUTURE, sort_keys=True)
    assert master["template"]["spec"]["futurePod"] == FUTURE


def test_apply_bodies_escape_line_separators_and_leave_out_managed_fields() -> None:
    obj = RayCluster.model_validate(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": "x", "managedFields": [{"manager": "flarekit"}]},
            "futureRoot": "a \u2028 b",
        }
    )
    body = dump_apply(obj)
    assert body.isascii() and b"\\u2028" in body
    assert json.loads(body) == {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "x"},
        "futureRoot": "a \u2028 b",
    }
