"""Reading a cluster's state from RayCluster / AppWrapper JSON, whatever is (not) there."""

from __future__ import annotations

from typing import Any

import pytest

from flarekit.cluster import ClusterState, ClusterStatus
from flarekit.cluster._status import (
    as_raycluster,
    cluster_status,
    head_service_name,
    owning_appwrapper,
)

Q = {"kueue.x-k8s.io/queue-name": "lq"}


#: The one required part of a RayCluster's spec (the status tests read only status fields).
HEAD = {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "r"}]}}}}


def rc(status: Any = None, suspend: bool | None = None, labels: Any = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "c", "namespace": "n"}, "spec": {**HEAD}}
    if labels:
        obj["metadata"]["labels"] = labels
    if suspend is not None:
        obj["spec"]["suspend"] = suspend
    if status is not None:
        obj["status"] = status
    return obj


def aw(phase: str | None = None, suspend: bool | None = None, **status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": "w", "namespace": "n", "labels": Q},
        "spec": {"components": []},
    }
    if suspend is not None:
        obj["spec"]["suspend"] = suspend
    if phase is not None:
        obj["status"] = {"phase": phase, **status}
    return obj


def cond(type_: str, status: str, message: str = "") -> dict[str, Any]:
    return {
        "type": type_, "status": status, "reason": type_, "message": message,
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "state", "reason"),
    [
        ({}, ClusterState.STARTING, None),  # no metadata, spec or status at all
        (rc(), ClusterState.STARTING, None),
        (rc({}), ClusterState.STARTING, None),
        (rc({"state": None, "conditions": None}), ClusterState.STARTING, None),
        (rc({"state": "ready"}), ClusterState.READY, None),
        (
            rc(
                {
                    "conditions": [
                        cond("HeadPodReady", "True"),
                        cond("RayClusterProvisioned", "True"),
                    ]
                }
            ),
            ClusterState.READY,
            None,
        ),
        (rc({"state": "failed", "reason": "boom"}), ClusterState.FAILED, "boom"),
        (
            rc({"state": "failed", "conditions": [cond("ReplicaFailure", "True", "no quota")]}),
            ClusterState.FAILED,
            "no quota",
        ),
        (
            rc({"conditions": [cond("ReplicaFailure", "True", "retrying pod")]}),
            ClusterState.STARTING,
            "retrying pod",
        ),
        (rc(suspend=True), ClusterState.SUSPENDED, None),
        (rc({"state": "suspended"}), ClusterState.SUSPENDED, None),
        (rc(suspend=True, labels=Q), ClusterState.QUEUED, "waiting for Kueue"),
        # Admitted and resumed, KubeRay not yet past its "suspended": starting, not queued.
        (rc({"state": "suspended"}, suspend=False, labels=Q), ClusterState.STARTING, "resuming"),
        (rc({"state": "ready"}, labels=Q), ClusterState.READY, None),
    ],
)
def test_raycluster_states(obj: Any, state: ClusterState, reason: str | None) -> None:
    status = cluster_status(obj, name="fallback", namespace="ns")
    assert status.state is state
    if reason is None:
        assert status.reason is None
    else:
        assert status.reason is not None and reason in status.reason


@pytest.mark.parametrize(
    ("wrapper", "inner", "state"),
    [
        (aw(), None, ClusterState.QUEUED),
        (aw("Suspended"), None, ClusterState.QUEUED),
        (aw("Suspended", suspend=True), None, ClusterState.QUEUED),
        (aw("Suspended", suspend=False), None, ClusterState.STARTING),
        (aw("Resuming", suspend=False), None, ClusterState.STARTING),
        (aw("Running", suspend=False), rc({}), ClusterState.STARTING),
        (aw("Running", suspend=False), rc({"state": "ready"}), ClusterState.READY),
        (aw("Succeeded"), None, ClusterState.UNKNOWN),
        (
            aw("Failed", conditions=[cond("Unhealthy", "True", "pod crashed")]),
            rc({"state": "ready"}),
            ClusterState.FAILED,
        ),
    ],
)
def test_appwrapper_states(wrapper: Any, inner: Any, state: ClusterState) -> None:
    status = cluster_status(inner, wrapper)
    assert status.state is state
    assert (status.name, status.appwrapper, status.queue) == ("w", "w", "lq")


def test_unqueued_suspended_appwrapper_is_suspended() -> None:
    wrapper = aw("Suspended", suspend=True)
    del wrapper["metadata"]["labels"]
    assert cluster_status(None, wrapper).state is ClusterState.SUSPENDED


def test_failed_appwrapper_quotes_its_conditions() -> None:
    status = cluster_status(None, aw("Failed", conditions=[cond("Unhealthy", "True", "OOM")]))
    assert status.reason == "OOM"


def test_counts_and_head() -> None:
    status = cluster_status(
        rc(
            {
                "state": "ready",
                "readyWorkerReplicas": 1,
                "desiredWorkerReplicas": 3,
                "head": {"serviceName": "custom-svc", "podIP": "10.0.0.1"},
            }
        )
    )
    assert (status.workers_ready, status.workers_desired, status.workers) == (1, 3, "1/3")
    assert status.head_address == "custom-svc.n.svc"
    assert cluster_status(rc({"state": "ready"})).workers == "?/?"
    assert cluster_status(rc({})).head_address is None


def test_nothing_at_all_is_unknown() -> None:
    status = cluster_status(None, None, name="x", namespace="y")
    assert (status.state, status.name, status.namespace) == (ClusterState.UNKNOWN, "x", "y")


def test_head_service_and_owner_helpers() -> None:
    assert head_service_name(None, "c") == "c-head-svc"
    assert head_service_name(as_raycluster(rc({"head": {"serviceName": "s"}})), "c") == "s"
    owned = rc()
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper", "name": "w",
         "uid": "u1"}
    ]  # fmt: skip
    assert owning_appwrapper(as_raycluster(owned)) == "w"
    labelled = rc(labels={"workload.codeflare.dev/appwrapper": "w2"})
    assert owning_appwrapper(as_raycluster(labelled)) == "w2"
    assert owning_appwrapper(as_raycluster(rc())) is None and owning_appwrapper(None) is None


def test_status_prints_and_escapes() -> None:
    status = ClusterStatus("c", "n", ClusterState.FAILED, reason="<oops> & more")
    assert "FAILED" in str(status) and "<oops> & more" in str(status)
    html = status._repr_html_()
    assert "&lt;oops&gt; &amp; more" in html and "<oops>" not in html
