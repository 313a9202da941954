"""The Kubernetes events about a job or a cluster: the object itself, what was made for it,
and its pods. This is where "why does it not start" is answered: the scheduler's
``FailedScheduling`` on a pod, Kueue's ``Pending`` on the Workload, an operator's
``FailedCreate`` on the object.

Events live in the object's namespace and name the object in ``involvedObject``. They are read
as the generated `Event` model with one list of the namespace's events, and matched here by
kind and name (a field selector on ``involvedObject`` would do the same on a real API server,
but it can name one object only, and not every server honours it for events). Kueue names the
Workload of a job ``<kind>-<name>-<5 hex digits of a hash>``, so a Workload's events are
matched by that name without listing Workloads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from flarekit_models.core import v1 as core_v1

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit_models.core.v1 import Event

__all__ = ["event_line", "events_about", "pod_names"]

#: (kind, name) of an object events may be about.
Subject = tuple[str, str]
_WORKLOAD_HASH = re.compile(r"-[0-9a-f]{5}")


def pod_names(
    client: Client, namespace: str, selectors: Iterable[Mapping[str, str]]
) -> list[Subject]:
    """("Pod", name) of every pod matching any of `selectors` (one list per selector)."""
    found: list[Subject] = []
    for selector in selectors:
        for pod in client.list(core_v1.Pod, namespace=namespace, label_selector=dict(selector)):
            if pod.metadata is not None and pod.metadata.name:
                found.append(("Pod", pod.metadata.name))
    return found


def events_about(
    client: Client,
    namespace: str,
    subjects: Iterable[Subject],
    *,
    workloads_of: Iterable[Subject] = (),
) -> list[core_v1.Event]:
    """The events in `namespace` about any of `subjects` ((kind, name) pairs), and about the
    Kueue Workloads made for `workloads_of`, oldest first (by when they were last seen, else
    first seen, else created). One request: the list of the namespace's events."""
    wanted = set(subjects)
    prefixes = tuple(f"{kind.lower()}-{name}" for kind, name in workloads_of)

    def about(event: core_v1.Event) -> bool:
        kind, name = event.involved_object.kind or "", event.involved_object.name or ""
        if (kind, name) in wanted:
            return True
        return kind == "Workload" and any(
            name.startswith(p) and _WORKLOAD_HASH.fullmatch(name[len(p) :]) for p in prefixes
        )

    found = [event for event in client.list(core_v1.Event, namespace=namespace) if about(event)]
    return sorted(found, key=_when)


def event_line(event: Event) -> str:
    """One line for a status display: ``Warning FailedScheduling Pod/x (3x): message``."""
    subject = f"{event.involved_object.kind}/{event.involved_object.name}"
    count = f" ({event.count}x)" if event.count and event.count > 1 else ""
    message = " ".join((event.message or "").split())
    head = f"{event.type or 'Normal'} {event.reason or ''} {subject}{count}".replace("  ", " ")
    return f"{head}: {message}" if message else head


def _when(event: Event) -> str:
    meta = event.metadata
    stamp = (
        event.last_timestamp
        or event.event_time
        or event.first_timestamp
        or (meta.creation_timestamp if meta is not None else None)
    )
    return str(stamp or "")
