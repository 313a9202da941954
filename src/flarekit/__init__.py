"""flarekit: run distributed ML on Kubernetes (Ray, Kueue, AppWrapper, JobSet, Kubeflow Trainer).

The typed models live in the generated package ``flarekit_models``; this
package holds the handwritten clients, the test emulator
(:mod:`flarekit.testing`) and, later, the user-facing facade.

Public names load on first use (see :mod:`flarekit.client`), so ``import flarekit`` stays
cheap: pydantic loads with the client, the ``kubernetes`` package only once credentials or a
client are made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flarekit.client import *  # noqa: F403

_CLIENT_NAMES = (
    "ALL_NAMESPACES",
    "AlreadyExists",
    "ApiError",
    "ApiUnavailable",
    "Cause",
    "Client",
    "ConfigError",
    "Conflict",
    "Credentials",
    "FieldValidation",
    "Forbidden",
    "Gone",
    "InsecureConnectionWarning",
    "Invalid",
    "ListIterator",
    "NotFound",
    "PatchType",
    "PropagationPolicy",
    "RetryPolicy",
    "ServerError",
    "ServerWarning",
    "Unauthorized",
    "Watch",
    "WatchEvent",
    "current_credentials",
    "from_kubeconfig",
    "from_token",
    "in_cluster",
    "login",
    "logout",
)

__all__: list[str] = [*_CLIENT_NAMES]


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        value = getattr(importlib.import_module("flarekit.client"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
