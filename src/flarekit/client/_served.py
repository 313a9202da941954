"""Which versions of an API group the connected cluster serves, asked of the client's facts.

Why: operators move their CRDs between versions (Kueue serves ``v1beta2`` from v0.15 on and
``v1beta1`` only before), and the facade must speak the version the server has. The answer
comes from the client's `ServerFacts` (one aggregated discovery request per client); these
functions are the spelling the facades use. `get_bytes` and `get_json` read any other path
through the client, 404 as None.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flarekit._products import KueueVersion
from flarekit.client._errors import ApiError, NotFound, Operation

if TYPE_CHECKING:
    from flarekit.client._client import Client

__all__ = [
    "get_bytes",
    "get_json",
    "preferred_kueue_version",
    "preferred_version",
    "served_versions",
]


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


def served_versions(client: Client, group: str) -> list[str]:
    """The versions of `group` the server serves, its preferred version first.

    Raises `NotServed` (naming the software to install) when the group is not served at all.
    The answer is kept on the `Client`; `client.forget()` asks again.
    """
    return client.facts.served_versions(group)


def preferred_version(client: Client, group: str, supported: Sequence[str]) -> str:
    """The first of `supported` (most preferred first) that the server serves for `group`."""
    return client.facts.preferred_version(group, supported)


def preferred_kueue_version(client: Client) -> KueueVersion:
    """``"v1beta2"`` when the server serves it (Kueue 0.15 and later), else ``"v1beta1"``."""
    return client.facts.kueue_version()
