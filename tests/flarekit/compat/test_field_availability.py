"""Fields a cluster's release lacks are refused before anything is created, naming the field,
the releases that have it and the release the cluster runs; objects are written in the newest
version the server serves and read back from any."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from negotiate_support import client_of, writes

from flarekit.client import NotServed
from flarekit.cluster import Cluster, ClusterConfiguration
from flarekit.compat import CONVERSIONS, FieldUnavailable, prepare_write, write_version
from flarekit.job import DistributedJob
from flarekit.kueue import list_queues
from flarekit_testing import FakeCluster

RAYCLUSTERS = ("ray.io", "v1", "rayclusters")


@pytest.fixture(scope="module")
def ray111() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kuberay": "v1.1.1", "appwrapper": "v1.2.1"}) as fc:
        yield fc


@pytest.fixture(scope="module")
def ray170() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kuberay": "v1.7.0", "appwrapper": "v1.2.1"}) as fc:
        yield fc


def gcs_config(name: str, **options: Any) -> ClusterConfiguration:
    return ClusterConfiguration(
        name, namespace="default", enable_gcs_ft=True, redis_address="redis:6379", **options
    )


# -- KubeRay v1.1.1 vs v1.7.0 ---------------------------------------------------------------


def test_gcs_fault_tolerance_is_refused_on_kuberay_1_1(ray111: FakeCluster) -> None:
    fc = ray111
    fc.clear_requests()
    with pytest.raises(FieldUnavailable) as caught:
        Cluster(gcs_config("ft"), client=client_of(fc)).apply()
    error = caught.value
    assert error.fields == ["enable_gcs_ft"]
    assert [m.path for m in error.missing] == ["spec.gcsFaultToleranceOptions"]
    text = str(error)
    assert "spec.gcsFaultToleranceOptions" in text
    assert "kuberay v1.4.2, v1.7.0" in text.lower()
    assert "KubeRay v1.1.1 on this cluster" in text
    assert writes(fc) == 0  # only reads: discovery, CRDs, the queue and name checks
    assert fc.objects("rayclusters", "default") == []


def test_gcs_fault_tolerance_is_kept_on_kuberay_1_7(ray170: FakeCluster) -> None:
    fc = ray170
    Cluster(gcs_config("ft"), client=client_of(fc)).apply()
    api = kubernetes.client.CustomObjectsApi(fc.api_client())
    stored = api.get_namespaced_custom_object(*RAYCLUSTERS[:2], "default", RAYCLUSTERS[2], "ft")
    assert stored["spec"]["gcsFaultToleranceOptions"]["redisAddress"] == "redis:6379"


def test_a_wrapped_cluster_is_checked_against_kuberay_too(ray111: FakeCluster) -> None:
    fc = ray111
    fc.clear_requests()
    with pytest.raises(FieldUnavailable) as caught:
        Cluster(gcs_config("wrapped", appwrapper=True), client=client_of(fc)).apply()
    assert caught.value.fields == ["enable_gcs_ft"]
    assert "spec.components[0].template.spec.gcsFaultToleranceOptions" in str(caught.value)
    assert writes(fc) == 0


def _raycluster(idle: bool = False, **spec: Any) -> dict[str, Any]:
    group: dict[str, Any] = {
        "groupName": "w",
        "rayStartParams": {},
        "template": {"spec": {"containers": []}},
    }
    later = {"idleTimeoutSeconds": 60} if idle else {}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "x", "namespace": "default"},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": []}}},
            "workerGroupSpecs": [group, {**group, "groupName": "v", **later}],
            **spec,
        },
    }


def test_autoscaler_options_added_later_are_refused_by_path(ray111: FakeCluster) -> None:
    obj = _raycluster(True, autoscalerOptions={"idleTimeoutSeconds": 60, "version": "v2"})
    with pytest.raises(FieldUnavailable) as caught:
        prepare_write(client_of(ray111), obj)
    missing = {m.path: m.having for m in caught.value.missing}
    assert missing == {
        "spec.autoscalerOptions.version": ("kuberay@v1.4.2", "kuberay@v1.7.0"),
        "spec.workerGroupSpecs[1].idleTimeoutSeconds": ("kuberay@v1.4.2", "kuberay@v1.7.0"),
    }
    # the same object is sent unchanged where the release has every field
    assert prepare_write(client_of(ray111), _raycluster()).to_dict() == _raycluster()


def test_without_crd_access_only_certain_absences_are_refused(ray111: FakeCluster) -> None:
    fc = ray111
    user = fc.add_user("no-crds")
    fc.deny(["get", "list"], "customresourcedefinitions", user="no-crds")
    try:
        client = client_of(fc, token=user)
        # discovery cannot tell v1.1.1 from v1.4.2, and v1.4.2 has gcsFaultToleranceOptions
        prepare_write(client, _raycluster(gcsFaultToleranceOptions={"redisAddress": "r:1"}))
        with pytest.raises(FieldUnavailable) as caught:  # but no candidate has authOptions
            prepare_write(client, _raycluster(authOptions={"mode": "token"}))
    finally:
        fc.clear_denies()
    text = str(caught.value)
    assert "kuberay v1.7.0" in text and "unknown" in text and "v1.1.1, v1.4.2" in text


# -- Kueue: newest served version, read back from any ---------------------------------------


def _localqueue(version: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "default"},
        "spec": {"clusterQueue": "cq", **spec},
    }


@pytest.mark.parametrize(
    ("release", "written"),
    [("v0.10.6", "v1beta1"), ("v0.14.8", "v1beta1"), ("v0.19.2", "v1beta2")],
)
def test_kueue_objects_are_written_in_the_newest_served_version(release: str, written: str) -> None:
    with FakeCluster(releases={"kueue": release}) as fc:
        client = client_of(fc)
        assert write_version(client, "kueue.x-k8s.io/v1beta1", "LocalQueue").endswith(written)
        for source in ("v1beta1", "v1beta2"):
            model = prepare_write(client, _localqueue(source))
            assert model.to_dict()["apiVersion"] == f"kueue.x-k8s.io/{written}"
            assert model.to_dict()["spec"]["clusterQueue"] == "cq"
        if release == "v0.10.6":
            with pytest.raises(FieldUnavailable) as caught:
                prepare_write(client, _localqueue("v1beta1", fairSharing={"weight": "2"}))
            text = str(caught.value)
            assert "kueue v0.14.8, v0.19.2" in text and "Kueue v0.10.6" in text


@pytest.mark.parametrize("release", ["v0.10.6", "v0.19.2"])
def test_queues_read_back_the_same_from_either_version(release: str) -> None:
    with FakeCluster(releases={"kueue": release}) as fc:
        version = "v1beta2" if release == "v0.19.2" else "v1beta1"
        fc.create(
            {
                "apiVersion": f"kueue.x-k8s.io/{version}",
                "kind": "ClusterQueue",
                "metadata": {"name": "cq"},
                "spec": {"namespaceSelector": {}},
            }
        )
        fc.create(_localqueue(version))
        queues = list_queues(client_of(fc), "default")
    assert [(q.name, q.cluster_queue) for q in queues] == [("lq", "cq")]


# -- AppWrapper v1.2.1 vs MCAD v1.40.0; training operator without Trainer -------------------


def test_appwrapper_on_an_mcad_cluster_goes_to_v1beta1_or_is_refused() -> None:
    body = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "default"},
        "spec": {"components": []},
    }
    with FakeCluster(releases={"appwrapper-mcad": "v1.40.0"}) as fc:
        client = client_of(fc)
        assert write_version(client, str(body["apiVersion"]), "AppWrapper").endswith("/v1beta1")
        key = ("workload.codeflare.dev/v1beta2", "AppWrapper", "workload.codeflare.dev/v1beta1")
        if key in CONVERSIONS:
            assert prepare_write(client, body).to_dict()["apiVersion"].endswith("/v1beta1")
        else:
            with pytest.raises(NotServed, match=r"v1\.40\.0.*only in workload\.codeflare\.dev"):
                prepare_write(client, body)
        assert writes(fc) == 0


def test_training_operator_cluster_runs_a_pytorchjob() -> None:
    releases = {"training-operator": "v1.9.4", "appwrapper": "v1.0.7"}
    with FakeCluster(releases=releases) as fc:
        client = client_of(fc)
        job = DistributedJob("ddp", script="train.py", image="example.com/t:1", client=client)
        assert job.target() == "PyTorchJob"
        job.submit()
        assert [o["metadata"]["name"] for o in fc.objects("pytorchjobs", "default")] == ["ddp"]
        wrapped = DistributedJob(
            "ddp-aw", script="train.py", image="example.com/t:1", appwrapper=True, client=client
        )
        wrapped.submit()
        assert fc.objects("appwrappers", "default")[0]["metadata"]["name"] == "ddp-aw"
