"""The release matrix's user script against the real operators: the oldest and the newest
release of each family that `make control-plane` builds, and the training-operator on a
cluster without Trainer.

The script and its checks are the FakeCluster matrix's (`test_release_matrix`): a queued Ray
cluster in an AppWrapper and a distributed training job, with a volume, a node selector and a
toleration, every setting read back, the job run to success and the cluster to ready. Here
the cluster's admins provide what a real cluster needs for that: nodes with the instance type
the script selects (tainted for GPUs, as the toleration expects) and the volume's claim,
bound to a volume.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import kubernetes
import pytest
from test_release_matrix import (
    CLAIM,
    QUEUE,
    QUEUE_LABEL,
    RELEASE_SETS,
    SELECTOR,
    admin_setup,
    carries_user_settings,
    user_script,
    values_under,
)

from flarekit import Client, RetryPolicy, from_kubeconfig
from flarekit.cluster import ClusterState
from flarekit.job._jobstate import JobState
from flarekit.testing import ControlPlane, NodePool
from flarekit.testing._cp_operators import FAMILIES, built_versions

pytestmark = [pytest.mark.slow, pytest.mark.operator_matrix, pytest.mark.timeout(1800)]

TIMEOUT = 180.0
NODES = (
    NodePool(count=1, name="cpu", cpu="16", memory="64Gi", gpus=0),
    NodePool(
        count=2,
        name="gpu",
        cpu="32",
        memory="128Gi",
        labels=dict(SELECTOR),
        taints=({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},),
    ),
)


#: Kueue releases without an integration for Trainer's TrainJob (it came with Kueue v0.13):
#: a queued TrainJob stays suspended there, with no Workload.
KUEUE_WITHOUT_TRAINJOB = ("v0.10.6",)


def _sets() -> dict[str, dict[str, str]]:
    """oldest / newest: every family at its oldest (newest) built release; oldest-trainer:
    Trainer and JobSet at their oldest under the newest others (the oldest Kueue cannot queue
    a TrainJob); no-trainer: the newest, without Trainer and JobSet, where a distributed job is
    a PyTorchJob."""
    built = {family: built_versions(family) for family in FAMILIES}
    if not all(built.values()):
        return {}
    newest = {family: versions[-1] for family, versions in built.items()}
    oldest = {family: versions[0] for family, versions in built.items()}
    no_trainer = {f: v for f, v in newest.items() if f not in ("trainer", "jobset")}
    old_trainer = {f: oldest[f] if f in ("trainer", "jobset") else v for f, v in newest.items()}
    return {
        "oldest": oldest,
        "oldest-trainer": old_trainer,
        "newest": newest,
        "no-trainer": no_trainer,
    }


SETS = _sets()


@pytest.fixture(scope="module", params=sorted(SETS) or ["not built"])
def plane(request: pytest.FixtureRequest, controlplane_binaries: Path) -> Iterator[ControlPlane]:
    if request.param not in SETS:
        message = "the operators are not built: run `make control-plane`"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    releases = SETS[request.param]
    with ControlPlane(
        releases=releases,
        operators=list(releases),
        binaries=controlplane_binaries,
        nodes=NODES,
        start_timeout=600.0,
    ) as plane:
        yield plane


def _storage(plane: ControlPlane, namespace: str) -> None:
    """The volume the script mounts: a claim bound to a volume, as an admin provides it."""
    plane.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"{namespace}-{CLAIM}"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "hostPath": {"path": "/data"},
                "claimRef": {"namespace": namespace, "name": CLAIM},
            },
        }
    )
    plane.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": CLAIM, "namespace": namespace},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    )


def _wait(check: object, what: str, timeout: float = TIMEOUT) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.5)


def _stored(plane: ControlPlane, namespace: str) -> dict[str, list[dict[str, object]]]:
    api = kubernetes.client.CustomObjectsApi(plane.api_client())
    out: dict[str, list[dict[str, object]]] = {}
    for group, plural in (
        ("workload.codeflare.dev", "appwrappers"),
        ("ray.io", "rayclusters"),
        ("trainer.kubeflow.org", "trainjobs"),
        ("kubeflow.org", "pytorchjobs"),
    ):
        try:
            rt = plane.resource(f"{plural}.{group}")
        except ValueError:
            continue
        found = api.list_namespaced_custom_object(group, rt.storage_version, namespace, plural)
        if found["items"]:
            out[plural] = found["items"]
    return out


def test_the_user_script_on_the_real_operators(plane: ControlPlane) -> None:
    namespace = "matrix"
    plane.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    _wait(lambda: plane.get("serviceaccounts", "default", namespace), "the service account")
    admin_setup(plane, namespace)  # type: ignore[arg-type]
    _storage(plane, namespace)
    releases = plane.releases or {}
    retry = RetryPolicy(attempts=3, backoff=0.05, max_backoff=0.5)
    with Client(from_kubeconfig(plane.kubeconfig_path), retry=retry) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a dropped field would be a PrunedFieldsWarning
            result = user_script(client, namespace)
        objects = _stored(plane, namespace)
        [wrapper] = objects["appwrappers"]
        assert wrapper["apiVersion"] == "workload.codeflare.dev/v1beta2"
        assert wrapper["metadata"]["labels"][QUEUE_LABEL] == QUEUE  # type: ignore[index]
        assert carries_user_settings(wrapper) == []
        training_kind = "trainjobs" if "trainer" in releases else "pytorchjobs"
        [training] = objects[training_kind]
        assert carries_user_settings(training) == []
        assert training["metadata"]["labels"][QUEUE_LABEL] == QUEUE  # type: ignore[index]
        if "trainer" in releases:
            pod_field = RELEASE_SETS[f"trainer-{releases['trainer']}"].pod_field
            assert pod_field in training["spec"]  # type: ignore[operator]
        queues_trainjobs = releases.get("kueue") not in KUEUE_WITHOUT_TRAINJOB
        if "trainer" not in releases or queues_trainjobs:
            _wait(lambda: result.job.status().state is JobState.SUCCEEDED, "the job succeeded")
        _wait(lambda: "rayclusters" in _stored(plane, namespace), "the wrapped RayCluster")
        [ray] = _stored(plane, namespace)["rayclusters"]
        assert carries_user_settings(ray) == []
        _wait(lambda: result.cluster.status().state is ClusterState.READY, "cluster ready")
        if "trainer" in releases and not queues_trainjobs:
            # This Kueue does not manage TrainJobs: the job is never admitted (no Workload),
            # and Trainer keeps it suspended, as flarekit submitted it to the queue.
            assert result.job.status().state is JobState.SUSPENDED
            workloads = plane.objects("workloads", namespace)
            owners = [r["kind"] for w in workloads for r in w["metadata"]["ownerReferences"]]
            assert "TrainJob" not in owners
        # The pods that asked for the nodes ran on them (selected, tainted).
        selected = [
            p
            for p in plane.objects("pods", namespace)
            if SELECTOR in list(values_under(p["spec"], "nodeSelector"))
        ]
        assert selected
        assert all(str(p["spec"].get("nodeName", "")).startswith("gpu-") for p in selected)
