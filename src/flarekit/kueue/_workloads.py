"""A job's Kueue Workload, and what its conditions say about admission.

Why: "my job is not starting" is nearly always "its Workload is not admitted", and the reason
is written in the Workload's conditions, not on the job. Kueue links the two by the label
``kueue.x-k8s.io/job-uid`` (the job's UID) and a controller owner reference from the Workload
to the job; a job owned by another job (a RayJob's RayCluster) is queued through its owner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from flarekit._objects import metadata_of
from flarekit.client import NotServed
from flarekit.kueue._models import kueue_model

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit.kueue._models import Workload
    from flarekit_models import KubeResource
    from flarekit_models.meta.v1 import Condition, OwnerReference

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


def _conditions(workload: Workload) -> dict[str, Condition]:
    status = workload.status
    return {str(c.type): c for c in (status.conditions or [] if status else []) if c.type}


def _is_true(condition: Condition | None) -> bool:
    return condition is not None and str(condition.status) == "True"


def admission_state(workload: Workload) -> AdmissionState:
    """The admission state of a Workload (either served version); a fresh Workload without
    status is pending."""
    meta, spec, status = workload.metadata, workload.spec, workload.status
    admission = status.admission if status is not None else None
    flavors: dict[str, str] = {}
    for assignment in (admission.pod_set_assignments or []) if admission is not None else []:
        flavors.update({str(k): str(v) for k, v in (assignment.flavors or {}).items()})
    name = meta.name if meta is not None else None
    namespace = meta.namespace if meta is not None else None
    local_queue = spec.queue_name if spec is not None else None
    cluster_queue = admission.cluster_queue if admission is not None else None
    conditions = _conditions(workload)
    chosen: tuple[State, Condition | None] = next(
        ((state, conditions[t]) for state, t in _STATES if _is_true(conditions.get(t))),
        ("pending", conditions.get("QuotaReserved") or conditions.get("Requeued")),
    )
    state, condition = chosen
    return AdmissionState(
        state,
        str(condition.reason or "") if condition is not None else "",
        (
            str(condition.message or "")
            if condition is not None
            else "Kueue has not looked at this Workload yet"
        ),
        workload=str(name or ""),
        namespace=str(namespace or ""),
        local_queue=str(local_queue or ""),
        cluster_queue=str(cluster_queue or ""),
        flavors=flavors,
    )


#: The conditions that decide a Workload's state, the first true one winning.
_STATES: tuple[tuple[State, str], ...] = (
    ("finished", "Finished"),
    ("admitted", "Admitted"),
    ("evicted", "Evicted"),
    ("quota_reserved", "QuotaReserved"),
)


def _uids(obj: KubeResource) -> list[str]:
    """The job's UID, then its controller's (a job owned by a job is queued through it)."""
    meta = metadata_of(obj)
    if meta is None:
        return []
    uids = [str(meta.uid)] if meta.uid else []
    for ref in meta.owner_references or []:
        if ref.controller and ref.uid:
            uids.append(str(ref.uid))
    return uids


def _created(workload: Workload) -> str:
    meta = workload.metadata
    return str((meta.creation_timestamp if meta is not None else None) or "")


def _owners(workload: Workload) -> list[OwnerReference]:
    meta = workload.metadata
    return list((meta.owner_references or []) if meta is not None else [])


def workload_for(client: Client, obj: KubeResource) -> Workload | None:
    """The Workload Kueue made for a job object as read from the cluster (a RayCluster,
    RayJob, TrainJob, AppWrapper, ...), or None: not queued, not yet seen by Kueue, not yet
    created (no UID), or Kueue not installed."""
    meta = metadata_of(obj)
    namespace = meta.namespace if meta is not None else None
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
            return max(labelled, key=_created)
    owned = [
        w
        for w in client.list(kind, namespace=namespace)
        if any(ref.uid in uids and ref.controller for ref in _owners(w))
    ]
    return max(owned, key=_created) if owned else None
