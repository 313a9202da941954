"""The API server a contract test talks to, as tests see it (see conftest.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import kubernetes
import pytest

ENV = "FLAREKIT_TEST_KUBECONFIG"
RUN_LABEL = "flarekit.dev/contract-run"


@dataclass
class Backend:
    """A reachable API server: how to make clients, and what this run created there."""

    client: Any
    real: bool
    name: str = "fakecluster"
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    _versions: dict[str, str] = field(default_factory=dict)

    def version(self, group: str) -> str:
        """The group's preferred version, from discovery, as a client would choose it."""
        if group not in self._versions:
            apis = kubernetes.client.ApisApi(self.client).get_api_versions()
            found = next((g for g in apis.groups if g.name == group), None)
            if found is None:
                pytest.skip(f"API group {group} is not served by the cluster under test")
            self._versions[group] = found.preferred_version.version
        return self._versions[group]


@dataclass
class Cluster:
    """What a contract test may use: an API client, its own namespace, served versions."""

    backend: Backend
    namespace: str
    created: list[tuple[str, str, str]] = field(default_factory=list)

    def api_client(self) -> Any:
        return self.backend.client

    def version(self, group: str) -> str:
        return self.backend.version(group)

    @property
    def run_label(self) -> dict[str, str]:
        """A label to put on cluster-scoped objects so a run can find (and clean) its own."""
        return {RUN_LABEL: self.backend.run_id}

    def unique(self, prefix: str) -> str:
        """A name no other test or run uses (for cluster-scoped objects)."""
        return f"{prefix}-{self.backend.run_id}-{uuid.uuid4().hex[:6]}"

    def cleanup_cluster_scoped(self, group: str, plural: str, name: str) -> None:
        """Delete this cluster-scoped object after the test (finalizers cleared first)."""
        self.created.append((group, plural, name))
