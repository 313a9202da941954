"""What kubectl users do daily, on FakeCluster and on the real control plane: wait for a
condition, watch a table, list CRDs, diff an unchanged object."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agreement_support import send

JSON = dict[str, Any]


def kubectl(server: Any, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    binary = Path(sys.executable).parent / "kubectl"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run `make` (it installs kubectl into the virtualenv)")
    return subprocess.run(
        [str(binary), "--kubeconfig", str(server.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KUBECONFIG": str(server.kubeconfig_path), "KUBECTL_EXTERNAL_DIFF": ""},
    )


def local_queue(name: str) -> JSON:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name},
        "spec": {"clusterQueue": "cq"},
    }


def test_kubectl_wait_for_a_condition(api_server: Any, api_namespace: str) -> None:
    """kubectl wait watches with `sendInitialEvents` and looks once the initial events end."""
    path = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{api_namespace}/localqueues"
    made = send(api_server, "POST", path, local_queue("lq")).body
    status = {
        "conditions": [
            {
                "type": "Active",
                "status": "True",
                "reason": "Ready",
                "message": "set by the test",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "observedGeneration": made["metadata"]["generation"],
            }
        ]
    }
    patched = send(
        api_server, "PATCH", f"{path}/lq/status", {"status": status}, "application/merge-patch+json"
    )
    assert patched.status == 200, patched.text
    done = kubectl(
        api_server,
        "wait",
        "localqueue/lq",
        "-n",
        api_namespace,
        "--for=condition=Active",
        "--timeout=20s",
    )
    assert done.returncode == 0, done.stderr
    assert "condition met" in done.stdout
