"""The release matrix's user script against the real operators: every family at its oldest
and at its newest built release, and a legacy CodeFlare cluster (MCAD's AppWrapper, the
training-operator without Trainer); see ``real_sets``.

The script and its checks are the FakeCluster matrix's (`test_release_matrix`): a queued Ray
cluster in an AppWrapper and a distributed training job, with a volume, a node selector and a
toleration, every setting read back, the job run to success and the cluster to ready. Here
the cluster's admins provide what a real cluster needs for that: nodes with the instance type
the script selects (tainted for GPUs, as the toleration expects) and the volume's claim,
bound to a volume. On the legacy set the Ray cluster is written in MCAD's v1beta1 (Kueue
does not queue those) and waits for MCAD, which is not built; the PyTorchJob runs queued.
"""

from __future__ import annotations

import warnings

import kubernetes
import pytest
from real_sets import SELECTOR
from test_release_matrix import (
    CLAIM,
    QUEUE,
    RELEASE_SETS,
    admin_setup,
    carries_user_settings,
    user_script,
    values_under,
)

from flarekit import Client, RetryPolicy, from_kubeconfig
from flarekit.cluster import ClusterState
from flarekit.job._jobstate import JobState
from flarekit.kueue import QueueOptOutWarning
from flarekit_testing import ControlPlane
from kube_support import QUEUE_LABEL
from wait_support import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.operator_matrix, pytest.mark.timeout(1800)]

TIMEOUT = 180.0
MCAD_WRAPPER = "workload.codeflare.dev/v1beta1"

#: Kueue releases without an integration for Trainer's TrainJob (the pinned Kueue v0.14.8 has
#: one): a queued TrainJob stays suspended there, with no Workload, so the job is not queued.
KUEUE_WITHOUT_TRAINJOB = ("v0.10.6",)


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


@pytest.mark.parametrize("release_plane", ["oldest", "newest", "legacy"], indirect=True)
def test_the_user_script_on_the_real_operators(release_plane: ControlPlane) -> None:
    plane = release_plane
    namespace = "matrix"
    plane.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    wait_until(
        lambda: plane.get("serviceaccounts", "default", namespace),
        "the service account",
        timeout=TIMEOUT,
        poll=0.5,
    )
    admin_setup(plane, namespace)  # type: ignore[arg-type]
    _storage(plane, namespace)
    releases = plane.releases or {}
    mcad = "appwrapper-mcad" in releases
    retry = RetryPolicy(attempts=3, backoff=0.05, max_backoff=0.5)
    with Client(from_kubeconfig(plane.kubeconfig_path), retry=retry) as client:
        queues_job = "trainer" not in releases or releases.get("kueue") not in (
            KUEUE_WITHOUT_TRAINJOB
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = user_script(
                client,
                namespace,
                cluster_queue=None if mcad else QUEUE,
                job_queue=QUEUE if queues_job else None,
            )
        # A dropped field would be a PrunedFieldsWarning; a job kept out of Kueue is said so.
        expected = [] if queues_job else [QueueOptOutWarning]
        assert [w.category for w in caught] == expected, [str(w.message) for w in caught]
        objects = _stored(plane, namespace)
        [wrapper] = objects["appwrappers"]
        labels = wrapper["metadata"].get("labels") or {}  # type: ignore[attr-defined]
        if mcad:
            assert wrapper["apiVersion"] == MCAD_WRAPPER
            assert QUEUE_LABEL not in labels
        else:
            assert wrapper["apiVersion"] == "workload.codeflare.dev/v1beta2"
            assert labels[QUEUE_LABEL] == QUEUE
        assert carries_user_settings(wrapper) == []
        training_kind = "trainjobs" if "trainer" in releases else "pytorchjobs"
        [training] = objects[training_kind]
        assert carries_user_settings(training) == []
        labels = training["metadata"].get("labels") or {}  # type: ignore[attr-defined]
        assert labels.get(QUEUE_LABEL) == (QUEUE if queues_job else None)
        if "trainer" in releases:
            pod_field = RELEASE_SETS[f"trainer-{releases['trainer']}"].pod_field
            assert pod_field in training["spec"]  # type: ignore[operator]
        wait_until(
            lambda: result.job.status().state is JobState.SUCCEEDED,
            "the job succeeded",
            timeout=TIMEOUT,
            poll=0.5,
        )
        if mcad:
            # No MCAD controller runs: the AppWrapper waits in MCAD's queue, and says so.
            status = result.cluster.status()
            assert status.state is ClusterState.QUEUED
            assert status.queue is None
            assert "waiting for MCAD to dispatch it" in str(status.reason)
            return
        wait_until(
            lambda: "rayclusters" in _stored(plane, namespace),
            "the wrapped RayCluster",
            timeout=TIMEOUT,
            poll=0.5,
        )
        [ray] = _stored(plane, namespace)["rayclusters"]
        assert carries_user_settings(ray) == []
        wait_until(
            lambda: result.cluster.status().state is ClusterState.READY,
            "cluster ready",
            timeout=TIMEOUT,
            poll=0.5,
        )
        # The pods that asked for the nodes ran on them (selected, tainted).
        selected = [
            p
            for p in plane.objects("pods", namespace)
            if SELECTOR in list(values_under(p["spec"], "nodeSelector"))
        ]
        assert selected
        assert all(str(p["spec"].get("nodeName", "")).startswith("gpu-") for p in selected)
