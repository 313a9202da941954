"""`apply_all(dry_run=True)`: the Plan of Kueue's admin objects, on FakeCluster and on the real
control plane with the same code: nothing is written, the server's defaults show, and after a
real apply only a changed quota is reported."""

from __future__ import annotations

import uuid

from flarekit.kueue import ClusterQueueSpec, LocalQueueSpec, ResourceFlavorSpec, apply_all
from flarekit_testing import ClusterBackend
from kube_support import client_for, new_namespace


def _specs(
    suffix: str, namespace: str, cpu: int
) -> list[ResourceFlavorSpec | ClusterQueueSpec | LocalQueueSpec]:
    return [
        ResourceFlavorSpec(f"f-{suffix}"),
        ClusterQueueSpec(f"cq-{suffix}", {f"f-{suffix}": {"cpu": cpu, "memory": "64Gi"}}),
        LocalQueueSpec("lq", namespace, f"cq-{suffix}"),
    ]


def test_dry_run_writes_nothing_then_shows_one_changed_quota(backend: ClusterBackend) -> None:
    namespace = new_namespace(backend, "kplan-")
    client = client_for(backend, namespace=namespace)
    suffix = uuid.uuid4().hex[:8]
    plan = apply_all(client, _specs(suffix, namespace, 8), dry_run=True)
    assert [(c.kind, c.action) for c in plan] == [
        ("ResourceFlavor", "create"), ("ClusterQueue", "create"), ("LocalQueue", "create"),
    ]  # fmt: skip
    assert backend.get("resourceflavors", f"f-{suffix}") is None
    assert backend.get("clusterqueues", f"cq-{suffix}") is None
    assert backend.get("localqueues", "lq", namespace) is None
    queue = plan.changes[1]
    # Kueue's CRD defaults what was not sent: the queueing strategy among them
    assert queue.defaults.get("spec.queueingStrategy") == "BestEffortFIFO"
    assert plan.exit_code == 1

    apply_all(client, _specs(suffix, namespace, 8))
    stored = backend.get("clusterqueues", f"cq-{suffix}")
    assert stored is not None
    version = stored["metadata"]["resourceVersion"]
    same = apply_all(client, _specs(suffix, namespace, 8), dry_run=True)
    assert same.exit_code == 0 and str(same) == ""
    more = apply_all(client, _specs(suffix, namespace, 16), dry_run=True)
    assert [c.action for c in more] == ["unchanged", "update", "unchanged"]
    (path,) = more.changes[1].changed_fields
    assert path.startswith("spec.resourceGroups[") and path.endswith("nominalQuota"), path
    after = backend.get("clusterqueues", f"cq-{suffix}")
    assert after is not None and after["metadata"]["resourceVersion"] == version
