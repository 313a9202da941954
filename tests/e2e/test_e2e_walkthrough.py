"""The walkthrough (`python -m flarekit.walkthrough`) on both backends, with its teardown check.

`--real-stack` starts a control plane with the real Kueue, KubeRay, JobSet and Trainer, takes
a footprint of the cluster, runs `run_tour` (every step, the teardown, the check that nothing
new is left) and stops the plane. This runs the same `run_tour` on the folder's backends (the
control plane here runs those operators too), so what differs from `--real-stack` is only the
start and stop of the plane, which tests/flarekit_testing/controlplane/test_controlplane.py checks.
"""

from __future__ import annotations

import io

from e2e_support import Backend

from flarekit import Client
from flarekit.walkthrough import Plan
from flarekit.walkthrough._footprint import Footprint
from flarekit.walkthrough._main import run_tour
from flarekit.walkthrough._narrate import Narrator
from flarekit_testing.controlplane._kwok import SIMULATED_LOG

STEPS = [
    "1. Set up Kueue queues, as a platform admin would",
    "2. Create a Ray cluster",
    "3. Wait for the Ray cluster to be ready",
    "4. Look at the cluster's details",
    "5. Run a Ray job on the cluster",
    "6. Submit a training job to the queue",
    "7. Watch the training job finish and read its logs",
    "8. Tear everything down",
]


def test_the_walkthrough_completes_and_leaves_nothing_behind(
    backend: Backend, namespace: str, client: Client
) -> None:
    # What the cluster puts in every new namespace comes before the footprint, as it does in
    # the namespace `--real-stack` uses (`default`).
    backend.wait(lambda: backend.get("serviceaccounts", "default", namespace), "service account")
    backend.wait(lambda: backend.get("configmaps", "kube-root-ca.crt", namespace), "root CA")
    footprint = Footprint(client, namespace)
    out = io.StringIO()
    plan = Plan(
        namespace=namespace,
        prefix=f"walk-{namespace}",
        setup_queues=True,
        cluster_timeout=backend.timeout,
        job_timeout=backend.timeout,
        delete_timeout=backend.timeout,
        poll=backend.poll,
        simulated_pods=True,
    )

    error, failures = run_tour(client, plan, Narrator(out), footprint, settle=backend.timeout)

    text = out.getvalue()
    assert error is None, f"{error!r}\n{text}"
    assert failures == [], text
    positions = [text.index(step) for step in STEPS]
    assert positions == sorted(positions)
    assert "state          READY" in text
    assert "Succeeded" in text
    assert "-> checked: nothing the walkthrough made is left on the cluster" in text
    # No pod ran (simulated operators, or KWOK's nodes): the walkthrough says so, and the log
    # shows no training output.
    assert "This cluster's pods are simulated" in text
    assert "loss=" not in text and "computed in Ray tasks: 328350" not in text
    if backend.real:
        # The real API server read the log from the node, where KWOK serves what is true.
        log = text.split("The first node's log:")[1]
        assert SIMULATED_LOG[0] in " ".join(line.strip() for line in log.splitlines())
    assert footprint.added() == []
