"""A TrainJob on the cluster read back into `flarekit.job.TrainJob`'s parameters.

Why: people attach to jobs they did not submit from this process (another notebook, a
colleague, ``kubectl apply``), and still want ``status()``, ``wait()``, ``logs()`` and
``delete()``. The object is read as plain JSON and every field is optional, so that a TrainJob
written by hand, or by any Trainer release, reads without errors; what has no parameter
(``env`` taken from secrets, pod customisation, which lives in a different field in each
Trainer release) is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarekit.client._fingerprint import CREATED_FROM
from flarekit.kueue import PRIORITY_LABEL, QUEUE_LABEL

__all__ = ["read_params"]

_RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


def _map(value: Any) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _env(value: Any) -> dict[str, str]:
    """Plain ``name: value`` variables (those read from secrets or fields have no parameter)."""
    items = value if isinstance(value, list) else []
    return {
        str(e["name"]): str(e.get("value") or "")
        for e in items
        if isinstance(e, Mapping) and e.get("name") and e.get("valueFrom") is None
    }


def read_params(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The `TrainJob` parameters a TrainJob object (Kubernetes JSON) expresses, by name.

    `resources_per_node` are the requests (else the limits) of ``trainer.resourcesPerNode``;
    `local_queue` and `priority_class` come from the Kueue labels, which are left out of
    `labels`; a queued job's ``spec.suspend`` is Kueue's, so only an unqueued job reads as
    created suspended.
    """
    metadata, spec = _map(obj.get("metadata")), _map(obj.get("spec"))
    labels = {k: str(v) for k, v in _map(metadata.get("labels")).items()}
    ref = _map(spec.get("runtimeRef"))
    trainer = _map(spec.get("trainer"))
    resources = _map(trainer.get("resourcesPerNode"))
    per_node = _map(resources.get("requests")) or _map(resources.get("limits"))
    queue = labels.pop(QUEUE_LABEL, None)
    kind = ref.get("kind")
    return {
        "name": str(metadata.get("name") or ""),
        "namespace": metadata.get("namespace"),
        "runtime": str(ref.get("name") or ""),
        "runtime_kind": kind if kind in _RUNTIME_KINDS else None,
        "image": trainer.get("image"),
        "command": _strings(trainer.get("command")),
        "args": _strings(trainer.get("args")),
        "num_nodes": trainer.get("numNodes"),
        "num_proc_per_node": trainer.get("numProcPerNode"),
        "resources_per_node": {k: str(v) for k, v in per_node.items()},
        "env": _env(trainer.get("env")),
        "labels": labels,
        "annotations": {
            k: str(v) for k, v in _map(metadata.get("annotations")).items() if k != CREATED_FROM
        },
        "local_queue": queue,
        "priority_class": labels.pop(PRIORITY_LABEL, None),
        "suspend": bool(spec.get("suspend")) and queue is None,
        "active_deadline_seconds": spec.get("activeDeadlineSeconds"),
    }
