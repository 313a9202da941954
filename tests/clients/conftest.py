"""Backends and clients for the client differential suite.

FakeCluster is always there. The real side is a kube-apiserver reached through a kubeconfig:
`flarekit.testing.ControlPlane` where the project provides it, else the cluster of
`FLAREKIT_REFERENCE_KUBECONFIG` (with the pinned CRDs installed, and a controller manager for
garbage collection and namespace defaults). Without one, FakeCluster is compared with the
outcomes recorded from the real server in `golden/` (`make differential-golden` rewrites
them from a live one).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from flarekit.testing import FakeCluster

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


@pytest.fixture(scope="session")
def fake_kubeconfig() -> Iterator[Path]:
    with FakeCluster() as fc:
        yield fc.kubeconfig_path


@pytest.fixture(scope="session")
def real_kubeconfig() -> Iterator[Path | None]:
    """A live kube-apiserver's kubeconfig, or None (then the recorded outcomes are used)."""
    try:
        from flarekit.testing import ControlPlane  # type: ignore[attr-defined]
    except ImportError:
        given = os.environ.get(ENV)
        yield Path(given) if given else None
        return
    with ControlPlane() as cp:
        yield Path(cp.kubeconfig_path)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from test_differential import FIGURES

    if FIGURES:
        terminalreporter.section("client differential: FakeCluster vs kube-apiserver")
        for client, figure in sorted(FIGURES.items()):
            terminalreporter.write_line(f"{client:10} {figure}")
