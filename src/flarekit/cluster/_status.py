"""What state a Ray cluster is in, read from its RayCluster and, when wrapped, its AppWrapper.

Why: KubeRay, Kueue and the AppWrapper controller each report a part of the story in their
own words (`state: ready`, `spec.suspend`, `phase: Resuming`, conditions; MCAD's v1beta1
AppWrapper `state: Pending`, `isdispatched`, its own conditions), and a fresh object has no
`status` at all. Users want one answer: is it ready, starting, waiting in a queue,
suspended or failed, how many workers are up, and where the head is. Everything here reads
the generated models (a field KubeRay renames is a type error here, not a silent None); a
missing field means "not reported yet".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import flarekit.client
from flarekit._json import JsonValue
from flarekit._objects import ConditionLike, find_condition, is_true, metadata_of
from flarekit._products import QUEUE_LABEL
from flarekit._tables import HtmlStatus
from flarekit.cluster._wrapper import MCAD_APPWRAPPER
from flarekit_models.appwrapper import v1beta1 as appwrapper_v1beta1
from flarekit_models.appwrapper import v1beta2 as appwrapper_v1beta2
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit_models import KubeResource
    from flarekit_models.appwrapper.v1beta1 import AppWrapper as McadAppWrapper
    from flarekit_models.appwrapper.v1beta2 import AppWrapper
    from flarekit_models.ray.v1 import RayCluster

__all__ = [
    "APPWRAPPER_LABEL",
    "ClusterState",
    "ClusterStatus",
    "as_appwrapper",
    "as_raycluster",
    "cluster_status",
    "head_service_name",
    "owning_appwrapper",
]

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


def as_raycluster(
    obj: ray_v1.RayCluster | Mapping[str, JsonValue] | None,
) -> ray_v1.RayCluster | None:
    """A RayCluster model (JSON is validated into one; None stays None)."""
    return ray_v1.RayCluster.model_validate(obj) if isinstance(obj, Mapping) else obj


def as_appwrapper(
    obj: KubeResource | Mapping[str, JsonValue] | None,
) -> appwrapper_v1beta2.AppWrapper | appwrapper_v1beta1.AppWrapper | None:
    """An AppWrapper model in the version it is written in (MCAD's v1beta1, or v1beta2);
    JSON is validated into one."""
    if obj is None or isinstance(
        obj, appwrapper_v1beta2.AppWrapper | appwrapper_v1beta1.AppWrapper
    ):
        return obj
    if not isinstance(obj, Mapping):
        raise TypeError(f"expected an AppWrapper, got {type(obj).__name__}")

    if flarekit.client.head_of(obj).api_version == MCAD_APPWRAPPER:
        return appwrapper_v1beta1.AppWrapper.model_validate(obj)
    return appwrapper_v1beta2.AppWrapper.model_validate(obj)


def head_service_name(raycluster: RayCluster | None, name: str) -> str:
    """The head Service: as KubeRay reports it, else KubeRay's naming (`<name>-head-svc`)."""
    status = raycluster.status if raycluster is not None else None
    head = status.head if status is not None else None
    return (head.service_name if head is not None else None) or f"{name}-head-svc"


def owning_appwrapper(raycluster: RayCluster | None) -> str | None:
    """The name of the AppWrapper a RayCluster belongs to, if any."""
    meta = raycluster.metadata if raycluster is not None else None
    if meta is None:
        return None
    owner = next((r.name for r in meta.owner_references or () if r.kind == "AppWrapper"), None)
    return owner or (meta.labels or {}).get(APPWRAPPER_LABEL) or None


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


def _message(condition: ConditionLike | None) -> str | None:
    """A condition's message, else its reason (None without a condition)."""
    if condition is None:
        return None
    return getattr(condition, "message", None) or getattr(condition, "reason", None) or None


def _raycluster_state(obj: RayCluster, queue: str | None) -> tuple[ClusterState, str | None]:
    status = obj.status
    conditions = status.conditions if status is not None else None
    state = ((status.state if status is not None else None) or "").lower()
    reason = (status.reason if status is not None else None) or None
    failure = find_condition(conditions, "ReplicaFailure")
    if state == "failed":
        return ClusterState.FAILED, reason or (failure.message if failure else None) or "failed"
    suspend = obj.spec.suspend if obj.spec is not None else None
    if state == "suspended" and suspend is False:
        # Resumed (Kueue admitted it, or the user did): KubeRay reports "suspended" until it
        # has made the pods again, so it is starting, not waiting for admission.
        return ClusterState.STARTING, "resuming: KubeRay is recreating its pods"
    if suspend is True or state == "suspended":
        if queue:
            return ClusterState.QUEUED, f"waiting for Kueue to admit it to LocalQueue {queue!r}"
        return ClusterState.SUSPENDED, reason
    if state == "ready":
        return ClusterState.READY, None
    if is_true(conditions, "HeadPodReady") and is_true(conditions, "RayClusterProvisioned"):
        return ClusterState.READY, None
    if failure is not None and failure.status.lower() == "true":
        return ClusterState.STARTING, failure.message or failure.reason or ""
    provisioned = find_condition(conditions, "RayClusterProvisioned")
    return ClusterState.STARTING, (provisioned.message if provisioned else None) or reason


def _appwrapper_state(
    wrapper: AppWrapper, raycluster: RayCluster | None, queue: str | None
) -> tuple[ClusterState, str | None]:
    suspend = wrapper.spec.suspend if wrapper.spec is not None else None
    status = wrapper.status
    phase = (status.phase if status is not None else None) or ""
    if phase == "Failed":
        conditions = status.conditions if status is not None else None
        messages = [_message(c) for c in conditions or () if c.type == "Unhealthy"]
        return ClusterState.FAILED, "; ".join(m for m in messages if m) or "AppWrapper failed"
    waiting = phase == "" or (phase in ("Suspended", "Suspending") and suspend is not False)
    if waiting and queue:
        return ClusterState.QUEUED, f"waiting for Kueue to admit it to LocalQueue {queue!r}"
    if phase in ("Suspended", "Suspending") and suspend is True:
        return ClusterState.SUSPENDED, f"AppWrapper phase {phase}"
    if phase == "Succeeded":
        return ClusterState.UNKNOWN, "the AppWrapper has finished (phase Succeeded)"
    if raycluster is not None:
        return _raycluster_state(raycluster, None)
    return ClusterState.STARTING, f"AppWrapper phase {phase}" if phase else None


def _mcad_detail(conditions: Iterable[ConditionLike] | None, message: str | None) -> str:
    """MCAD appends a condition per step; the last one says where it is now."""
    found = list(conditions or ())
    last = found[-1] if found else None
    words = (
        [w for w in (last.type, getattr(last, "reason", None), _message(last)) if w]
        if last is not None
        else []
    )
    text = ": ".join(dict.fromkeys(words))  # reason often repeats the type
    return text or message or ""


def _mcad_state(
    wrapper: McadAppWrapper, raycluster: RayCluster | None
) -> tuple[ClusterState, str | None]:
    """MCAD's AppWrapper (workload.codeflare.dev/v1beta1): `status.state` is empty until MCAD
    has seen it, then Pending (in MCAD's queue, also after a requeue), Running or
    RunningHoldCompletion (dispatched), Completed, Failed, or Deleted (MCAD gave up after its
    requeuing limit and removed what it had created)."""
    status = wrapper.status
    state = (status.state if status is not None else None) or ""
    detail = _mcad_detail(
        status.conditions if status is not None else None,
        status.message if status is not None else None,
    )
    suffix = f" ({detail})" if detail else ""
    if state == "Failed":
        return ClusterState.FAILED, detail or "MCAD reports the AppWrapper failed"
    if state == "Deleted":
        return ClusterState.FAILED, f"MCAD removed what the AppWrapper created{suffix}"
    if state == "Completed":
        return ClusterState.UNKNOWN, "the AppWrapper has finished (MCAD state Completed)"
    dispatched = (status is not None and status.isdispatched is True) or state in (
        "Running",
        "RunningHoldCompletion",
    )
    if not dispatched:
        if status is not None and status.canrun is True:
            return ClusterState.STARTING, f"MCAD is dispatching it{suffix}"
        seen = f"MCAD state {state}" if state else "MCAD has not queued it yet"
        return ClusterState.QUEUED, f"waiting for MCAD to dispatch it: {seen}{suffix}"
    if raycluster is not None:
        return _raycluster_state(raycluster, None)
    return ClusterState.STARTING, f"MCAD dispatched it (state {state or 'unknown'}){suffix}"


def cluster_status(
    raycluster: RayCluster | Mapping[str, JsonValue] | None,
    appwrapper: KubeResource | Mapping[str, JsonValue] | None = None,
    *,
    name: str = "",
    namespace: str = "",
) -> ClusterStatus:
    """The status of a RayCluster, or of an AppWrapper (v1beta2, or MCAD's v1beta1) and the
    RayCluster it made (if any yet), as models or as Kubernetes JSON.

    Either object may lack `status`; at least one of them should be given (with neither, the
    state is UNKNOWN).
    """
    rc, wrapper = as_raycluster(raycluster), as_appwrapper(appwrapper)
    top = wrapper if wrapper is not None else rc
    meta = metadata_of(top) if top is not None else None
    name = (meta.name if meta is not None else None) or name
    namespace = (meta.namespace if meta is not None else None) or namespace
    queue = ((meta.labels if meta is not None else None) or {}).get(QUEUE_LABEL) or None
    if isinstance(wrapper, appwrapper_v1beta1.AppWrapper):
        queue = None  # Kueue does not queue MCAD AppWrappers; a label there means nothing
        state, reason = _mcad_state(wrapper, rc)
    elif wrapper is not None:
        state, reason = _appwrapper_state(wrapper, rc, queue)
    elif rc is not None:
        state, reason = _raycluster_state(rc, queue)
    else:
        state, reason = ClusterState.UNKNOWN, "no RayCluster or AppWrapper found"
    rc_status = rc.status if rc is not None else None
    head = rc_status.head if rc_status is not None else None
    rc_meta = rc.metadata if rc is not None else None
    rc_name = (rc_meta.name if rc_meta is not None else None) or name
    rc_namespace = (rc_meta.namespace if rc_meta is not None else None) or namespace
    head_address = None
    if head is not None and (head.service_name or head.pod_ip or head.service_ip):
        head_address = f"{head_service_name(rc, rc_name)}.{rc_namespace}.svc"
    return ClusterStatus(
        name=name,
        namespace=namespace,
        state=state,
        workers_ready=rc_status.ready_worker_replicas if rc_status is not None else None,
        workers_desired=rc_status.desired_worker_replicas if rc_status is not None else None,
        head_address=head_address,
        reason=str(reason) if reason else None,
        queue=str(queue) if queue else None,
        appwrapper=(meta.name if meta is not None else None) if wrapper is not None else None,
    )
