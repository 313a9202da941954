"""A job's Kueue Workload, and what its conditions say about admission.

Why: "my job is not starting" is nearly always "its Workload is not admitted", and the reason
is written in the Workload's conditions, not on the job. Kueue links the two by the label
``kueue.x-k8s.io/job-uid`` (the job's UID) and a controller owner reference from the Workload
to the job; a job owned by another job (a RayJob's RayCluster) is queued through its owner.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from flarekit.client._served import NotServed
from flarekit.kueue._models import kueue_model

if TYPE_CHECKING:
    from flarekit.client._client import Client
    from flarekit_models._base import KubeResource

__all__ = ["JOB_UID_LABEL", "AdmissionState", "State", "admission_state", "workload_for"]

#: The label Kueue puts on a Workload with the UID of the job it stands for.
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"

State = Literal["pending", "quota_reserved", "admitted", "evicted", "finished"]


@dataclass(frozen=True)
class AdmissionState:
    """Where a Workload stands in Kueue, and Kueue's own reason and message for it.

    `state` is ``"pending"`` (waiting; `reason`/`message` say why, e.g. ``Inadmissible`` /
    ``LocalQueue x doesn't exist``), ``"quota_reserved"`` (quota held, admission checks not
    yet passed), ``"admitted"``, ``"evicted"`` (taken back, to be queued again) or
    ``"finished"`` (`reason` ``Succeeded`` or ``Failed``).
    """

    state: State
    reason: str = ""
    message: str = ""
    workload: str = ""
    namespace: str = ""
    local_queue: str = ""
    cluster_queue: str = ""
    #: resource name -> ResourceFlavor assigned at admission (all pod sets together)
    flavors: dict[str, str] = field(default_factory=dict)

    @property
    def admitted(self) -> bool:
        return self.state == "admitted"

    @property
    def pending(self) -> bool:
        return self.state in ("pending", "quota_reserved", "evicted")

    def __str__(self) -> str:
        text = self.state.replace("_", " ")
        if self.cluster_queue and self.state in ("admitted", "quota_reserved"):
            text += f" in ClusterQueue {self.cluster_queue}"
        why = ": ".join(p for p in (self.reason, self.message) if p)
        return f"{text} ({why})" if why else text


def _conditions(workload: Any) -> dict[str, Any]:
    status = getattr(workload, "status", None)
    return {str(c.type): c for c in (getattr(status, "conditions", None) or []) if c.type}


def _is_true(condition: Any) -> bool:
    return condition is not None and str(condition.status) == "True"


def admission_state(workload: KubeResource) -> AdmissionState:
    """The admission state of a Workload (either served version); a fresh Workload without
    status is pending."""
    meta: Any = getattr(workload, "metadata", None)
    spec: Any = getattr(workload, "spec", None)
    status: Any = getattr(workload, "status", None)
    admission: Any = getattr(status, "admission", None)
    flavors: dict[str, str] = {}
    for assignment in getattr(admission, "pod_set_assignments", None) or []:
        flavors.update({str(k): str(v) for k, v in (assignment.flavors or {}).items()})
    common: dict[str, Any] = {
        "workload": str(getattr(meta, "name", None) or ""),
        "namespace": str(getattr(meta, "namespace", None) or ""),
        "local_queue": str(getattr(spec, "queue_name", None) or ""),
        "cluster_queue": str(getattr(admission, "cluster_queue", None) or ""),
        "flavors": flavors,
    }
    conditions = _conditions(workload)
    chosen: tuple[State, Any]
    if _is_true(conditions.get("Finished")):
        chosen = ("finished", conditions["Finished"])
    elif _is_true(conditions.get("Admitted")):
        chosen = ("admitted", conditions["Admitted"])
    elif _is_true(conditions.get("Evicted")):
        chosen = ("evicted", conditions["Evicted"])
    elif _is_true(conditions.get("QuotaReserved")):
        chosen = ("quota_reserved", conditions["QuotaReserved"])
    else:
        waiting = conditions.get("QuotaReserved") or conditions.get("Requeued")
        if waiting is None:
            return AdmissionState(
                "pending", "", "Kueue has not looked at this Workload yet", **common
            )
        chosen = ("pending", waiting)
    state, condition = chosen
    return AdmissionState(
        state, str(condition.reason or ""), str(condition.message or ""), **common
    )


def _uids(obj: Any) -> list[str]:
    """The job's UID, then its controller's (a job owned by a job is queued through it)."""
    meta: Any = getattr(obj, "metadata", None)
    if meta is None:
        return []
    uids = [str(meta.uid)] if meta.uid else []
    for ref in meta.owner_references or []:
        if ref.controller and ref.uid:
            uids.append(str(ref.uid))
    return uids


def _newest(workloads: Iterable[Any]) -> Any:
    return max(
        workloads,
        key=lambda w: str(getattr(w.metadata, "creation_timestamp", None) or ""),
        default=None,
    )


def workload_for(client: Client, obj: KubeResource) -> Any | None:
    """The Workload Kueue made for a job object as read from the cluster (a RayCluster,
    RayJob, TrainJob, AppWrapper, ...), or None: not queued, not yet seen by Kueue, not yet
    created (no UID), or Kueue not installed."""
    meta: Any = getattr(obj, "metadata", None)
    namespace = getattr(meta, "namespace", None)
    uids = _uids(obj)
    if not uids or not namespace:
        return None
    try:
        kind = kueue_model(client, "Workload")
    except NotServed:
        return None
    for uid in uids:
        labelled = list(client.list(kind, namespace=namespace, label_selector={JOB_UID_LABEL: uid}))
        if labelled:
            return _newest(labelled)
    owned = [
        w
        for w in client.list(kind, namespace=namespace)
        if any(
            ref.uid in uids and ref.controller
            for ref in (getattr(w.metadata, "owner_references", None) or [])
        )
    ]
    return _newest(owned) if owned else None
