"""`ray.init("ray://...")` against a real Ray head that requires mutual TLS, with the client
certificate `flarekit.generate_tls_cert` made from the cluster's CA Secret.

The head runs in its own network and PID namespace (ray_tls_in_netns.py under ``unshare``, as
the Jobs integration test does); this test reads the checks it printed and makes sure no Ray
process outlived the namespace.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import test_ray_jobs_integration as integration

HERE = Path(__file__).parent
CHECKS = {
    "head up, client certificate accepted",
    "ray.init with the exported certificate runs a task",
    "a certificate from another CA is refused",
    "no client certificate is refused",
}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ray_client_connects_with_the_generated_certificate() -> None:
    integration._require_isolation()
    # Ray's unix sockets live under its temp dir, whose paths must stay short.
    work = Path(tempfile.mkdtemp(prefix="fktls-", dir="/tmp" if Path("/tmp").is_dir() else None))
    try:
        run = subprocess.run(
            [*integration.UNSHARE, sys.executable, str(HERE / "ray_tls_in_netns.py"), str(work)],
            capture_output=True,
            text=True,
            timeout=540,
        )
        leftovers = integration._leftover_processes(str(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    output = f"{run.stdout}\n{run.stderr}"
    checks = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            found = json.loads(line)
            checks[found["check"]] = (found["ok"], found["detail"])
    assert set(checks) == CHECKS, output[-8000:]
    assert {name: detail for name, (ok, detail) in checks.items() if not ok} == {}
    assert run.returncode == 0, output[-8000:]
    assert leftovers == [], "Ray processes outlived their namespace"
