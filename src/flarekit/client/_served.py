"""Which versions of an API group the connected cluster serves, from its discovery documents.

Why: operators move their CRDs between versions (Kueue serves ``v1beta2`` from v0.15 on and
``v1beta1`` only before), and the facade must speak the version the server has. Asking
``/apis/<group>`` once per `Client` is cheap and exact; the answer is kept on the client
(`Client.knowledge`) so that repeated calls (validation, then apply, then status) send one
discovery request in all.

This is deliberately small: one place that knows how to ask, so that a fuller version
negotiation can later replace it without touching its callers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from flarekit._products import KUEUE_GROUP, PRODUCTS
from flarekit.client._errors import ApiError, NotFound, Operation

if TYPE_CHECKING:
    from flarekit.client._client import Client

__all__ = [
    "KUEUE_GROUP",
    "KUEUE_VERSIONS",
    "KueueVersion",
    "NotServed",
    "forget_served",
    "get_bytes",
    "get_json",
    "preferred_kueue_version",
    "preferred_version",
    "served_versions",
]

KueueVersion = Literal["v1beta2", "v1beta1"]
#: The Kueue versions flarekit speaks, most preferred first.
KUEUE_VERSIONS: tuple[KueueVersion, ...] = ("v1beta2", "v1beta1")


class NotServed(LookupError):
    """The cluster does not serve an API group (or none of the versions flarekit speaks)."""

    def __init__(self, group: str, message: str, served: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.group = group
        self.served: tuple[str, ...] = tuple(served)


def _not_installed(group: str) -> NotServed:
    product = PRODUCTS.get(group)
    if product is None:
        return NotServed(group, f"the cluster does not serve the {group} API group")
    return NotServed(group, f"{product} is not installed on this cluster (no {group} API group)")


def get_bytes(client: Client, path: str) -> bytes | None:
    """GET `path` through the client as the raw JSON body; None when the server answers 404
    (for callers that fingerprint an answer before, or instead of, parsing it). Other
    failures raise flarekit's API errors, as every client call does."""
    try:
        return client.get_raw(path)
    except NotFound:
        return None


def get_json(client: Client, path: str) -> Any:
    """GET `path` through the client as JSON; None when the server answers 404 (errors as
    for `get_bytes`; an answer that is not JSON is an `ApiError`)."""
    raw = get_bytes(client, path)
    if raw is None:
        return None
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        raise ApiError(
            Operation("get", path), 200, "BadDiscovery", f"the answer to GET {path} is not JSON"
        ) from None


def _discover(client: Client, group: str) -> tuple[str, ...]:
    """GET /apis/<group> through the client: versions, preferred first."""
    from flarekit.client._discovery import APIGroup, read_document

    path = f"/apis/{group}"
    raw = get_bytes(client, path)
    if raw is None:
        return ()
    return tuple(read_document(APIGroup, path, raw).served_versions())


def served_versions(client: Client, group: str) -> list[str]:
    """The versions of `group` the server serves, its preferred version first.

    Raises `NotServed` (naming the software to install) when the group is not served at all.
    The answer is kept on the `Client`; `client.forget()` asks again.
    """
    known = client.knowledge.learn("served", group, tuple, lambda: _discover(client, group))
    if not known:
        raise _not_installed(group)
    return list(known)


def preferred_version(client: Client, group: str, supported: Sequence[str]) -> str:
    """The first of `supported` (most preferred first) that the server serves for `group`."""
    served = served_versions(client, group)
    for version in supported:
        if version in served:
            return version
    product = PRODUCTS.get(group, f"the {group} API group")
    raise NotServed(
        group,
        f"{product} on this cluster serves {group} versions {', '.join(served)}; flarekit "
        f"needs one of {', '.join(supported)}",
        served,
    )


def preferred_kueue_version(client: Client) -> KueueVersion:
    """``"v1beta2"`` when the server serves it (Kueue 0.15 and later), else ``"v1beta1"``."""
    version = preferred_version(client, KUEUE_GROUP, KUEUE_VERSIONS)
    return "v1beta2" if version == "v1beta2" else "v1beta1"


def forget_served(client: Client) -> None:
    """Drop what was learnt about `client`'s cluster (after installing or upgrading CRDs);
    the same as `client.forget()`."""
    client.forget()
