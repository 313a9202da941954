"""Which clients the differential suite drives, and how each is made for a kubeconfig."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ENV = "FLAREKIT_REFERENCE_KUBECONFIG"
CLIENTS = ("kubectl", "dynamic", "lightkube", "kr8s")


def kubectl_binary() -> Path:
    """The kubectl `make` placed beside the interpreter (from the registry package)."""
    found = Path(sys.executable).parent / "kubectl"
    if not found.exists():
        pytest.fail(f"{found} is missing: run `make` (it installs kubectl into the virtualenv)")
    return found


def adapter(name: str, kubeconfig: Path) -> Any:
    import adapters

    if name == "kubectl":
        return adapters.Kubectl(kubectl_binary(), kubeconfig)
    made = {"dynamic": adapters.Dynamic, "lightkube": adapters.Lightkube, "kr8s": adapters.Kr8s}
    return made[name](kubeconfig)
