"""The Kueue model classes of the version the connected cluster serves.

Why: Kueue v0.15 introduced ``kueue.x-k8s.io/v1beta2`` (and renamed some fields); older
releases serve only ``v1beta1``. Everything in :mod:`flarekit.kueue` reads and writes the
version `flarekit.client._served` found, through the generated models of that version.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit.client._served import KueueVersion, preferred_kueue_version

if TYPE_CHECKING:
    from flarekit.client._client import Client

__all__ = ["PRIORITY_LABEL", "QUEUE_LABEL", "kueue_model", "kueue_module"]


def kueue_module(version: KueueVersion | Client) -> ModuleType:
    """``flarekit_models.kueue.<version>`` for a version, or for the version a client's
    cluster serves."""
    chosen = version if isinstance(version, str) else preferred_kueue_version(version)
    return importlib.import_module(f"flarekit_models.kueue.{chosen}")


def kueue_model(version: KueueVersion | Client, name: str) -> Any:
    """One model class (``"LocalQueue"``, ``"ClusterQueueSpec"``, ...) of that version."""
    return getattr(kueue_module(version), name)
