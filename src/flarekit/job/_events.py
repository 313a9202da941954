"""The Kubernetes events about one object: why a job's pods do not start, what Kueue decided.

Events live in the object's namespace and name it in ``involvedObject``; they are read as the
generated `Event` model and matched here by kind and name (a field selector on
``involvedObject`` would do the same on a real API server, but not every server honours it
for events, so matching is done client-side, which is right everywhere).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flarekit.client._client import Client
    from flarekit_models._base import KubeResource
    from flarekit_models.core.v1 import Event

__all__ = ["events_about"]


def events_about(
    client: Client, namespace: str, kind: type[KubeResource], name: str
) -> list[Event]:
    """Events whose involved object is the `kind` named `name` in `namespace`, oldest first
    (by the time they were last seen, else first seen, else created)."""
    from flarekit_models.core.v1 import Event

    kind_name = kind.resource_info().kind
    found = [
        event
        for event in client.list(Event, namespace=namespace)
        if event.involved_object.kind == kind_name and event.involved_object.name == name
    ]
    return sorted(found, key=_when)


def _when(event: Event) -> str:
    meta = event.metadata
    stamp = (
        event.last_timestamp
        or event.event_time
        or event.first_timestamp
        or (meta.creation_timestamp if meta is not None else None)
    )
    return str(stamp or "")
