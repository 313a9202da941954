"""What state a Ray cluster is in, read from its RayCluster and, when wrapped, its AppWrapper.

Why: KubeRay, Kueue and the AppWrapper controller each report a part of the story in their
own words (`state: ready`, `spec.suspend`, `phase: Resuming`, conditions; MCAD's v1beta1
AppWrapper `state: Pending`, `isdispatched`, its own conditions), and a fresh object has no
`status` at all. Users want one answer: is it ready, starting, waiting in a queue,
suspended or failed, how many workers are up, and where the head is. Everything here reads
Kubernetes JSON (dicts) defensively: a missing field means "not reported yet", never a
`KeyError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from flarekit._products import QUEUE_LABEL
from flarekit._tables import HtmlStatus
from flarekit.cluster._wrapper import MCAD_APPWRAPPER

__all__ = [
    "APPWRAPPER_LABEL",
    "ClusterState",
    "ClusterStatus",
    "cluster_status",
    "head_service_name",
    "owning_appwrapper",
]

JSON = Mapping[str, Any]

#: The AppWrapper controller labels the components it creates with the AppWrapper's name.
APPWRAPPER_LABEL = "workload.codeflare.dev/appwrapper"


class ClusterState(StrEnum):
    """The state of a Ray cluster, in one word."""

    READY = "READY"
    STARTING = "STARTING"
    QUEUED = "QUEUED"  # waiting for Kueue to admit it (or, for an MCAD AppWrapper, MCAD)
    SUSPENDED = "SUSPENDED"  # suspended by someone, not waiting in a queue
    FAILED = "FAILED"
    UNKNOWN = "UNKNOWN"


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _meta(obj: JSON | None) -> dict[str, Any]:
    return _map(_map(obj).get("metadata"))


def _int(value: Any) -> int | None:
    try:
        return None if value is None or isinstance(value, bool) else int(value)
    except (TypeError, ValueError):
        return None


def _condition(status: Mapping[str, Any], type_: str) -> dict[str, Any] | None:
    for item in status.get("conditions") or []:
        if isinstance(item, Mapping) and item.get("type") == type_:
            return dict(item)
    return None


def _is_true(status: Mapping[str, Any], type_: str) -> bool:
    found = _condition(status, type_)
    return found is not None and str(found.get("status")).lower() == "true"


def head_service_name(raycluster: JSON | None, name: str) -> str:
    """The head Service: as KubeRay reports it, else KubeRay's naming (`<name>-head-svc`)."""
    head = _map(_map(_map(raycluster).get("status")).get("head"))
    return str(head.get("serviceName") or f"{name}-head-svc")


def owning_appwrapper(raycluster: JSON | None) -> str | None:
    """The name of the AppWrapper a RayCluster belongs to, if any."""
    for ref in _meta(raycluster).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("kind") == "AppWrapper":
            return str(ref.get("name"))
    label = _map(_meta(raycluster).get("labels")).get(APPWRAPPER_LABEL)
    return str(label) if label else None


@dataclass(frozen=True)
class ClusterStatus(HtmlStatus):
    """A Ray cluster's state, worker counts, head address and the reason for its state.

    `workers_ready` / `workers_desired` are `None` until KubeRay reports them; `head_address`
    is the head Service's in-cluster DNS name once the head exists; `queue` is the Kueue
    LocalQueue it was sent to (None for an MCAD AppWrapper, which Kueue does not queue);
    `appwrapper` names the AppWrapper holding it, if any.
    """

    name: str
    namespace: str
    state: ClusterState
    workers_ready: int | None = None
    workers_desired: int | None = None
    head_address: str | None = None
    reason: str | None = None
    queue: str | None = None
    appwrapper: str | None = None

    @property
    def ready(self) -> bool:
        return self.state is ClusterState.READY

    @property
    def workers(self) -> str:
        """`ready/desired`, with `?` for what is not reported yet."""
        ready = "?" if self.workers_ready is None else str(self.workers_ready)
        desired = "?" if self.workers_desired is None else str(self.workers_desired)
        return f"{ready}/{desired}"

    def _status_title(self) -> str:
        return f"Ray cluster {self.namespace}/{self.name}"

    def _status_rows(self) -> Sequence[tuple[str, object]]:
        rows: list[tuple[str, object]] = [
            ("state", self.state.value),
            ("workers ready", self.workers),
            ("head", self.head_address),
        ]
        if self.queue:
            rows.append(("queue", self.queue))
        if self.appwrapper:
            rows.append(("appwrapper", self.appwrapper))
        if self.reason:
            rows.append(("reason", self.reason))
        return rows

    def __str__(self) -> str:
        return self.as_table()


def _raycluster_state(obj: JSON, queue: str | None) -> tuple[ClusterState, str | None]:
    spec = _map(_map(obj).get("spec"))
    status = _map(_map(obj).get("status"))
    state = str(status.get("state") or "").lower()
    reason = status.get("reason") or None
    if state == "failed":
        failure = _condition(status, "ReplicaFailure")
        return ClusterState.FAILED, reason or (failure or {}).get("message") or "failed"
    if spec.get("suspend") is True or state == "suspended":
        if queue:
            return ClusterState.QUEUED, f"waiting for Kueue to admit it to LocalQueue {queue!r}"
        return ClusterState.SUSPENDED, reason
    if state == "ready":
        return ClusterState.READY, None
    if _is_true(status, "HeadPodReady") and _is_true(status, "RayClusterProvisioned"):
        return ClusterState.READY, None
    failure = _condition(status, "ReplicaFailure")
    if failure is not None and str(failure.get("status")).lower() == "true":
        return ClusterState.STARTING, str(failure.get("message") or failure.get("reason") or "")
    provisioned = _condition(status, "RayClusterProvisioned")
    return ClusterState.STARTING, (provisioned or {}).get("message") or reason


def _appwrapper_state(
    wrapper: JSON, raycluster: JSON | None, queue: str | None
) -> tuple[ClusterState, str | None]:
    spec = _map(_map(wrapper).get("spec"))
    status = _map(_map(wrapper).get("status"))
    phase = str(status.get("phase") or "")
    if phase == "Failed":
        messages = [
            str(c.get("message") or c.get("reason"))
            for c in status.get("conditions") or []
            if isinstance(c, Mapping) and c.get("type") == "Unhealthy"
        ]
        return ClusterState.FAILED, "; ".join(m for m in messages if m) or "AppWrapper failed"
    waiting = phase == "" or (
        phase in ("Suspended", "Suspending") and spec.get("suspend") is not False
    )
    if waiting and queue:
        return ClusterState.QUEUED, f"waiting for Kueue to admit it to LocalQueue {queue!r}"
    if phase in ("Suspended", "Suspending") and spec.get("suspend") is True:
        return ClusterState.SUSPENDED, f"AppWrapper phase {phase}"
    if phase == "Succeeded":
        return ClusterState.UNKNOWN, "the AppWrapper has finished (phase Succeeded)"
    if raycluster is not None:
        state, reason = _raycluster_state(raycluster, None)
        return state, reason
    return ClusterState.STARTING, f"AppWrapper phase {phase}" if phase else None


def _last_condition(status: Mapping[str, Any]) -> dict[str, Any]:
    """MCAD appends a condition per step; the last one says where it is now."""
    found = [c for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    return dict(found[-1]) if found else {}


def _mcad_detail(status: Mapping[str, Any]) -> str:
    last = _last_condition(status)
    words = [str(last.get(k)) for k in ("type", "reason", "message") if last.get(k)]
    text = ": ".join(dict.fromkeys(words))  # reason often repeats the type
    return text or str(status.get("message") or "")


def _mcad_state(wrapper: JSON, raycluster: JSON | None) -> tuple[ClusterState, str | None]:
    """MCAD's AppWrapper (workload.codeflare.dev/v1beta1): `status.state` is empty until MCAD
    has seen it, then Pending (in MCAD's queue, also after a requeue), Running or
    RunningHoldCompletion (dispatched), Completed, Failed, or Deleted (MCAD gave up after its
    requeuing limit and removed what it had created)."""
    status = _map(_map(wrapper).get("status"))
    state = str(status.get("state") or "")
    detail = _mcad_detail(status)
    suffix = f" ({detail})" if detail else ""
    if state == "Failed":
        return ClusterState.FAILED, detail or "MCAD reports the AppWrapper failed"
    if state == "Deleted":
        return ClusterState.FAILED, f"MCAD removed what the AppWrapper created{suffix}"
    if state == "Completed":
        return ClusterState.UNKNOWN, "the AppWrapper has finished (MCAD state Completed)"
    dispatched = status.get("isdispatched") is True or state in ("Running", "RunningHoldCompletion")
    if not dispatched:
        if status.get("canrun") is True:
            return ClusterState.STARTING, f"MCAD is dispatching it{suffix}"
        seen = f"MCAD state {state}" if state else "MCAD has not queued it yet"
        return ClusterState.QUEUED, f"waiting for MCAD to dispatch it: {seen}{suffix}"
    if raycluster is not None:
        return _raycluster_state(raycluster, None)
    return ClusterState.STARTING, f"MCAD dispatched it (state {state or 'unknown'}){suffix}"


def cluster_status(
    raycluster: JSON | None, appwrapper: JSON | None = None, *, name: str = "", namespace: str = ""
) -> ClusterStatus:
    """The status of a RayCluster, or of an AppWrapper (v1beta2, or MCAD's v1beta1) and the
    RayCluster it made (if any yet).

    Either object may lack `status`; at least one of them should be given (with neither, the
    state is UNKNOWN).
    """
    top = appwrapper if appwrapper is not None else raycluster
    meta = _meta(top)
    name = str(meta.get("name") or name)
    namespace = str(meta.get("namespace") or namespace)
    queue = _map(meta.get("labels")).get(QUEUE_LABEL) or None
    mcad = appwrapper is not None and _map(appwrapper).get("apiVersion") == MCAD_APPWRAPPER
    if mcad:
        queue = None  # Kueue does not queue MCAD AppWrappers; a label there means nothing
        state, reason = _mcad_state(_map(appwrapper), raycluster)
    elif appwrapper is not None:
        state, reason = _appwrapper_state(appwrapper, raycluster, queue)
    elif raycluster is not None:
        state, reason = _raycluster_state(raycluster, queue)
    else:
        state, reason = ClusterState.UNKNOWN, "no RayCluster or AppWrapper found"
    rc_status = _map(_map(raycluster).get("status"))
    head = _map(rc_status.get("head"))
    rc_name = str(_meta(raycluster).get("name") or name)
    rc_namespace = str(_meta(raycluster).get("namespace") or namespace)
    head_address = None
    if head.get("serviceName") or head.get("podIP") or head.get("serviceIP"):
        head_address = f"{head_service_name(raycluster, rc_name)}.{rc_namespace}.svc"
    return ClusterStatus(
        name=name,
        namespace=namespace,
        state=state,
        workers_ready=_int(rc_status.get("readyWorkerReplicas")),
        workers_desired=_int(rc_status.get("desiredWorkerReplicas")),
        head_address=head_address,
        reason=str(reason) if reason else None,
        queue=str(queue) if queue else None,
        appwrapper=str(meta.get("name")) if appwrapper is not None else None,
    )
