"""ControlPlane(operators=[...]): the real operators start with their upstream install, serve
their webhooks on 127.0.0.1, run as their ServiceAccount, and leave nothing behind."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flarekit_testing import ComponentFailed, ControlPlane
from flarekit_testing.controlplane import _operators as operators
from flarekit_testing.controlplane._operators import built_versions

JOBSET = built_versions("jobset")
pytestmark = pytest.mark.skipif(not JOBSET, reason="no JobSet operator is built")


def _gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def plane(controlplane_binaries: Path) -> Iterator[ControlPlane]:
    version = JOBSET[-1]
    with ControlPlane(
        releases={"jobset": version}, operators=["jobset"], binaries=controlplane_binaries
    ) as plane:
        yield plane


def test_the_operator_runs_at_the_release_asked_for(plane: ControlPlane) -> None:
    assert plane.operators == {"jobset": JOBSET[-1]}
    assert "jobset-operator" in plane.pids
    assert plane.releases is not None and plane.releases["jobset"] == JOBSET[-1]
    assert "Starting" in plane.component_log("jobset-operator", 200)


def test_webhooks_call_the_operator_on_loopback(plane: ControlPlane) -> None:
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        [config] = [c for c in plane.objects(kind) if c["metadata"]["name"].startswith("jobset-")]
        for hook in config["webhooks"]:
            assert "service" not in hook["clientConfig"]
            assert hook["clientConfig"]["url"].startswith("https://127.0.0.1:")
            assert hook["clientConfig"]["caBundle"]
    crd = plane.get("customresourcedefinitions", "jobsets.jobset.x-k8s.io") or {}
    conversion = crd["spec"]["conversion"]
    assert conversion["strategy"] == "Webhook"
    assert conversion["webhook"]["clientConfig"]["url"].endswith("/convert")


def test_the_webhook_defaults_what_is_created(plane: ControlPlane) -> None:
    """JobSet's mutating webhook fills in the success policy: the API server called it."""
    plane.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hooks"}})
    created = plane.create(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "defaulted", "namespace": "hooks"},
            "spec": {"replicatedJobs": [{"name": "w", "template": _job_template()}]},
        }
    )
    assert created["spec"]["successPolicy"] == {"operator": "All"}


def _job_template() -> dict[str, Any]:
    container = {"name": "c", "image": "busybox"}
    return {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}}}


def test_the_operator_acts_as_its_service_account(plane: ControlPlane) -> None:
    """It may do what its upstream role grants and nothing else: the API server's audit log
    shows its requests under the ServiceAccount's name."""
    audit = (plane.directory / "audit.log").read_text()
    assert '"username":"system:serviceaccount:jobset-system:jobset-controller-manager"' in audit


def test_stop_leaves_no_operator_process(controlplane_binaries: Path) -> None:
    plane = ControlPlane(
        releases={"jobset": JOBSET[0]}, operators=["jobset"], binaries=controlplane_binaries
    )
    with plane:
        group = plane.pids["jobset-operator"]
        directory = plane.directory
    assert _gone(group)  # the launcher, the sandbox and the operator: one process group
    assert all(_gone(pid) for pid in plane.started_pids.values())
    assert not directory.exists()


def test_an_operator_that_exits_fails_the_start_and_leaves_nothing(
    controlplane_binaries: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = operators.make_plan

    def exits_at_once(*args: Any, **kwargs: Any) -> operators.Plan:
        plan = real(*args, **kwargs)
        plan.argv = ["/bin/sh", "-c", "echo 'no luck'; exit 3"]
        return plan

    monkeypatch.setattr(operators, "make_plan", exits_at_once)
    plane = ControlPlane(
        releases={"jobset": JOBSET[0]}, operators=["jobset"], binaries=controlplane_binaries
    )
    with pytest.raises(ComponentFailed, match="jobset-operator exited"):
        plane.start()
    assert all(_gone(pid) for pid in plane.started_pids.values())
    assert plane.last_directory is not None and not plane.last_directory.exists()


def test_unbuilt_releases_and_missing_partners_are_refused_before_anything_starts() -> None:
    with pytest.raises(operators.OperatorNotBuilt, match=r"JobSet v0\.0\.1 operator is not built"):
        ControlPlane(releases={"jobset": "v0.0.1"}, operators=["jobset"])
    with pytest.raises(ValueError, match="needs 'jobset'"):
        ControlPlane(operators=["trainer"])
