"""The Kueue apiVersions the conversions speak of."""

from __future__ import annotations

__all__ = ["V1BETA1", "V1BETA2", "pair"]

V1BETA1 = "kueue.x-k8s.io/v1beta1"
V1BETA2 = "kueue.x-k8s.io/v1beta2"


def pair(kind: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """((v1beta1, kind), (v1beta2, kind))."""
    return (V1BETA1, kind), (V1BETA2, kind)
