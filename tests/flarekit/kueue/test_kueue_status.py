"""list_queues / queue_status: LocalQueues with pending and admitted Workloads and their
ClusterQueue's usage against quota, as rows, text and HTML; tolerant of missing status, of
unreadable ClusterQueues, and of real upstream queue objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from flarekit import ALL_NAMESPACES, Client, NotFound
from flarekit.kueue import (
    ClusterQueueSpec,
    LocalQueueSpec,
    QueueList,
    ResourceFlavorSpec,
    apply_all,
    list_queues,
    queue_status,
)
from flarekit_testing import FakeCluster
from kube_support import new_namespace

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "kueue.x-k8s.io"


def _active(status: bool, message: str) -> dict[str, Any]:
    return {
        "type": "Active",
        "status": "True" if status else "False",
        "reason": "Ready" if status else "ClusterQueueIsInactive",
        "message": message,
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }


def _setup(fc: FakeCluster, client: Client) -> str:
    ns = new_namespace(fc)
    apply_all(
        client,
        [
            ResourceFlavorSpec("status-flavor"),
            ClusterQueueSpec(
                "status-cq", {"status-flavor": {"cpu": 8, "memory": "32Gi", "nvidia.com/gpu": 2}}
            ),
            LocalQueueSpec("team", ns, "status-cq"),
            LocalQueueSpec("default", ns, "status-cq"),
        ],
    )
    return ns


def test_fresh_queues_have_unknown_counts_and_zero_usage(fc: FakeCluster, client: Client) -> None:
    ns = _setup(fc, client)
    queues = list_queues(client, ns)
    assert isinstance(queues, QueueList)
    assert [(q.name, q.cluster_queue, q.default) for q in queues] == [
        ("default", "status-cq", True),
        ("team", "status-cq", False),
    ]
    team = queues[1]
    assert (team.pending, team.admitted, team.active) == (None, None, None)
    assert [str(u) for u in team.usage] == [
        "status-flavor/cpu 0/8",
        "status-flavor/memory 0/32Gi",
        "status-flavor/nvidia.com/gpu 0/2",
    ]


def test_usage_against_quota_from_status(fc: FakeCluster, client: Client) -> None:
    ns = _setup(fc, client)
    usage_field = (
        "flavorsUsage" if fc.resource("localqueues").storage_version == "v1beta2" else "flavorUsage"
    )
    fc.set_status(
        "localqueues",
        "team",
        {
            "pendingWorkloads": 3,
            "admittedWorkloads": 1,
            "reservingWorkloads": 1,
            "conditions": [_active(True, "Can submit new workloads to localQueue")],
            usage_field: [{"name": "status-flavor", "resources": [{"name": "cpu", "total": "2"}]}],
        },
        ns,
    )
    fc.set_status(
        "clusterqueues",
        "status-cq",
        {
            "flavorsUsage": [
                {
                    "name": "status-flavor",
                    "resources": [
                        {"name": "cpu", "total": "6", "borrowed": "0"},
                        {"name": "nvidia.com/gpu", "total": "2", "borrowed": "0"},
                    ],
                }
            ]
        },
    )
    status = queue_status(client, "team", ns)
    assert (status.pending, status.admitted, status.reserving, status.active) == (3, 1, 1, True)
    cpu = status.usage[0]
    assert (cpu.resource, cpu.used, cpu.quota, cpu.queue_used) == ("cpu", "6", "8", "2")
    assert status.usage_text() == (
        "status-flavor/cpu 6/8, status-flavor/memory 0/32Gi, status-flavor/nvidia.com/gpu 2/2"
    )
    text = status.as_table()
    assert text.splitlines()[0] == f"LocalQueue {ns}/team"
    assert "6 of 8 used (2 by this queue)" in text

    table = list_queues(client, ns).table()
    header, _, *rows = table.splitlines()
    assert header.split() == [
        "NAMESPACE", "LOCALQUEUE", "CLUSTERQUEUE", "ACTIVE", "PENDING", "ADMITTED", "USAGE",
    ]  # fmt: skip
    assert rows[1].split()[:6] == [ns, "team", "status-cq", "yes", "3", "1"]
    assert rows[0].split()[:2] == [ns, "default"] and "(default)" in rows[0]


def test_inactive_queue_shows_kueue_message(fc: FakeCluster, client: Client) -> None:
    ns = _setup(fc, client)
    fc.set_status(
        "localqueues", "team", {"conditions": [_active(False, "Can't submit new workloads")]}, ns
    )
    status = queue_status(client, "team", ns)
    assert status.active is False
    assert status.message == "Can't submit new workloads"
    assert "Message" in status.as_table()


def test_html_is_escaped(fc: FakeCluster, client: Client) -> None:
    ns = _setup(fc, client)
    fc.set_status("localqueues", "team", {"conditions": [_active(False, "<b>no</b> & more")]}, ns)
    html = queue_status(client, "team", ns)._repr_html_()
    assert "&lt;b&gt;no&lt;/b&gt; &amp; more" in html and "<b>no</b>" not in html
    listing = list_queues(client, ns)._repr_html_()
    assert listing.startswith("<table") and "status-cq" in listing


def test_unreadable_cluster_queues_leave_quota_unknown(fc: FakeCluster, client: Client) -> None:
    ns = _setup(fc, client)
    fc.deny(resource="clusterqueues")
    try:
        queues = list_queues(client, ns)
    finally:
        fc.clear_denies()
    assert [q.usage for q in queues] == [(), ()]
    assert queues[0].usage_text() == "-"


def test_empty_namespace_and_missing_queue(fc: FakeCluster, client: Client, ns: str) -> None:
    assert list_queues(client, ns) == []
    assert list_queues(client, ns).table() == f"No LocalQueues in namespace {ns!r}."
    assert list_queues(client, ALL_NAMESPACES).__class__(namespace=ALL_NAMESPACES).table() == (
        "No LocalQueues in any namespace."
    )
    with pytest.raises(NotFound):
        queue_status(client, "nope", ns)
    with pytest.raises(ValueError, match="one namespace"):
        queue_status(client, "nope", ALL_NAMESPACES)


def _samples(version: str, kind: str) -> list[dict[str, Any]]:
    folder = SAMPLES / version / kind
    if not folder.is_dir():
        pytest.skip(f"no upstream {kind} samples at {folder}")
    return [yaml.safe_load(p.read_text()) for p in sorted(folder.glob("*.yaml"))]


def test_upstream_sample_queues_are_listed(fc: FakeCluster, client: Client, ns: str) -> None:
    version = fc.resource("clusterqueues").storage_version
    created_cqs: dict[str, dict[str, Any]] = {}
    for obj in _samples(version, "ClusterQueue"):
        name = obj["metadata"]["name"]
        if name not in created_cqs and fc.get("clusterqueues", name) is None:
            created_cqs[name] = fc.create(obj)
    local_names = set()
    for obj in _samples(version, "LocalQueue"):
        name = obj["metadata"]["name"]
        if name in local_names:
            continue
        local_names.add(name)
        obj = {**obj, "metadata": {**obj["metadata"], "namespace": ns}}
        fc.create(obj)
    queues = list_queues(client, ns)
    assert sorted(q.name for q in queues) == sorted(local_names)
    for queue in queues:
        cq = created_cqs.get(queue.cluster_queue)
        if cq is None:
            continue
        quotas = {
            (f["name"], r["name"]): str(r["nominalQuota"])
            for g in cq["spec"].get("resourceGroups") or []
            for f in g["flavors"]
            for r in f["resources"]
        }
        assert {(u.flavor, u.resource): u.quota for u in queue.usage} == quotas
    assert any(created_cqs.get(q.cluster_queue) for q in queues)
    assert len(list_queues(client, ALL_NAMESPACES)) >= len(queues)
