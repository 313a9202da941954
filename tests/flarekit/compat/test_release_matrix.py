"""One user script against every pinned release set: it works, keeping every field, or it
stops before creating anything, naming the field the cluster's release cannot take.

The script is what a data scientist would write: a queued Ray cluster (in an AppWrapper, the
way CodeFlare runs them) with a volume, a node selector and a toleration on its workers, and
a distributed training job with the same settings, then both statuses read back. It runs
unchanged against FakeCluster serving each release set of the families flarekit negotiates
with (one family at a time moved away from the newest release), with the simulated operators.
Where it succeeds, the objects are read back through plain `CustomObjectsApi` and must carry
every value the user set. On the legacy MCAD AppWrapper (v1beta1) the script stops before
creating anything at `local_queue`: Kueue does not queue v1beta1 AppWrappers (MCAD dispatches
them itself); without a queue the same cluster is written and read back in v1beta1.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import kubernetes
import pytest

from flarekit import Client
from flarekit._validation import ConfigError
from flarekit.cluster import Cluster, ClusterConfiguration, ClusterState
from flarekit.job._distributed import DistributedJob
from flarekit.job._jobstate import JobState
from flarekit_models._crds import default_releases
from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    PyTorchJobController,
    RayClusterController,
    TrainJobController,
)
from kube_support import QUEUE_LABEL, client_for, new_namespace, seed_queues
from wait_support import wait_until

pytestmark = pytest.mark.slow  # about 1.5 s per release set: a FakeCluster, and the job run

TICK = 0.02
SELECTOR = {"node.kubernetes.io/instance-type": "gpu-a100"}
TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
CLAIM = "datasets"
MOUNT_PATH = "/data"
QUEUE = "lq"

# -- the user's script --------------------------------------------------------------------------


@dataclass
class ScriptResult:
    cluster: Cluster
    job: Any
    cluster_status: Any
    job_status: Any


def user_script(
    client: Client,
    namespace: str,
    cluster_queue: str | None = QUEUE,
    job_queue: str | None = QUEUE,
    **cluster_options: Any,
) -> ScriptResult:
    """A queued Ray cluster and a training job with a volume, node selector and toleration
    (`cluster_options`: more Ray cluster settings, for the refusal test; `job_queue`: the
    job's LocalQueue, None where the cluster's Kueue cannot queue it)."""
    volume = {"name": "data", "persistentVolumeClaim": {"claimName": CLAIM}}
    mount = {"name": "data", "mountPath": MOUNT_PATH}
    config = ClusterConfiguration(
        "ray",
        namespace=namespace,
        num_workers=1,
        worker_node_selector=SELECTOR,
        worker_tolerations=[TOLERATION],
        volumes=[volume],
        volume_mounts=[mount],
        local_queue=cluster_queue,
        appwrapper=True,
        **cluster_options,
    )
    cluster = Cluster(config, client)
    cluster.apply()
    job = DistributedJob(
        "train",
        script="train.py",
        image="pytorch/pytorch:2.5.1",
        j="2x1",
        cpu=1,
        mounts=[f"type=volume,src={CLAIM},dst={MOUNT_PATH}"],
        node_selector=SELECTOR,
        tolerations=[TOLERATION],
        local_queue=job_queue,
        no_queue=job_queue is None,
        namespace=namespace,
        client=client,
    ).submit()
    return ScriptResult(cluster, job, cluster.status(), job.status())


# -- release sets -------------------------------------------------------------------------------


def release_set(**changes: str | None) -> dict[str, str]:
    """The newest releases, with `changes` (None: the family is not installed)."""
    releases = {**default_releases(), "training-operator": "v1.9.4"}
    for family, tag in changes.items():
        family = family.replace("_", "-")
        if tag is None:
            releases.pop(family, None)
        else:
            releases[family] = tag
    return releases


@dataclass(frozen=True)
class Expect:
    """What the script leaves on a cluster with these releases."""

    releases: dict[str, str]
    training: str = "trainjobs"  # the kind the DistributedJob becomes
    pod_field: str | None = "runtimePatches"  # where a TrainJob carries the pod settings
    wrapper: str = "workload.codeflare.dev/v1beta2"
    #: The option the script stops at, before creating anything, and what the error says.
    refused: str | None = None
    refusal_says: tuple[str, ...] = ()


RELEASE_SETS: dict[str, Expect] = {
    "kuberay-v1.1.1": Expect(release_set(kuberay="v1.1.1")),
    "kuberay-v1.7.0": Expect(release_set(kuberay="v1.7.0")),
    "kueue-v0.10.6": Expect(release_set(kueue="v0.10.6")),
    "kueue-v0.14.8": Expect(release_set(kueue="v0.14.8")),
    "kueue-v0.19.2": Expect(release_set(kueue="v0.19.2")),
    "trainer-v2.0.1": Expect(release_set(trainer="v2.0.1"), pod_field="podSpecOverrides"),
    "trainer-v2.3.0": Expect(release_set(trainer="v2.3.0")),
    "appwrapper-v1.0.7": Expect(release_set(appwrapper="v1.0.7")),
    "appwrapper-v1.2.1": Expect(release_set(appwrapper="v1.2.1")),
    "mcad-v1.40.0": Expect(
        release_set(appwrapper=None, appwrapper_mcad="v1.40.0"),
        wrapper="workload.codeflare.dev/v1beta1",
        refused="local_queue",  # Kueue does not queue MCAD's AppWrappers
        refusal_says=("MCAD release v1.40.0", "Kueue does not queue", "appwrapper=False"),
    ),
    "training-operator-v1.9.4-no-trainer": Expect(
        release_set(trainer=None), training="pytorchjobs", pod_field=None
    ),
}


def controllers() -> list[Any]:
    return [
        RayClusterController(),
        KueueController(),
        AppWrapperController(),
        TrainJobController(run_for=0.5),
        PyTorchJobController(run_for=0.5),
    ]


def admin_setup(fc: FakeCluster, namespace: str) -> None:
    """What the cluster's admins provide: queues, and the torch runtime where Trainer is."""
    # Quota enough for everything (memory "1000" would be 1000 bytes, which the real Kueue
    # enforces: the simulated one does not check amounts).
    seed_queues(
        fc, namespace, QUEUE, flavor="default-flavor", quota={"cpu": "1000", "memory": "1000Gi"}
    )
    try:
        fc.resource("clustertrainingruntimes")
    except ValueError:
        return
    if fc.get("clustertrainingruntimes", "torch-distributed") is None:
        container = {"name": "node", "image": "pytorch/pytorch:2.5.1"}
        job = {"template": {"spec": {"template": {"spec": {"containers": [container]}}}}}
        fc.create(
            {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "ClusterTrainingRuntime",
                "metadata": {
                    "name": "torch-distributed",
                    "labels": {"trainer.kubeflow.org/framework": "torch"},
                },
                "spec": {
                    "mlPolicy": {"numNodes": 1, "torch": {}},
                    "template": {"spec": {"replicatedJobs": [{"name": "node", **job}]}},
                },
            }
        )


# -- checking what the server holds -------------------------------------------------------------

USER_KINDS = (
    ("workload.codeflare.dev", "appwrappers"),
    ("ray.io", "rayclusters"),
    ("trainer.kubeflow.org", "trainjobs"),
    ("kubeflow.org", "pytorchjobs"),
)


def stored(fc: FakeCluster, namespace: str) -> dict[str, list[dict[str, Any]]]:
    """Every object of the user's kinds in `namespace`, read through `CustomObjectsApi`."""
    api = kubernetes.client.CustomObjectsApi(fc.api_client())
    out: dict[str, list[dict[str, Any]]] = {}
    for group, plural in USER_KINDS:
        try:
            rt = fc.resource(f"{plural}.{group}")
        except ValueError:
            continue
        version = rt.storage_version
        found = api.list_namespaced_custom_object(group, version, namespace, plural)
        if found["items"]:
            out[plural] = found["items"]
    return out


def values_under(obj: Any, key: str) -> Iterator[Any]:
    """Every value of a field named `key`, anywhere in `obj`."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                yield v
            yield from values_under(v, key)
    elif isinstance(obj, list):
        for item in obj:
            yield from values_under(item, key)


def carries_user_settings(obj: dict[str, Any]) -> list[str]:
    """What of the user's settings `obj` lacks (empty when it has everything)."""
    missing = []
    if SELECTOR not in list(values_under(obj, "nodeSelector")):
        missing.append("node selector")
    if not any(TOLERATION in t for t in values_under(obj, "tolerations")):
        missing.append("toleration")
    if {"claimName": CLAIM} not in list(values_under(obj, "persistentVolumeClaim")):
        missing.append("volume")
    if MOUNT_PATH not in list(values_under(obj, "mountPath")):
        missing.append("volume mount")
    return missing


# -- the matrix ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clusters() -> Iterator[dict[str, FakeCluster]]:
    """The running FakeCluster, by release set: one at a time, started when first used."""
    running: dict[str, FakeCluster] = {}
    try:
        yield running
    finally:
        for fc in running.values():
            fc.stop()


def cluster_for(clusters: dict[str, FakeCluster], name: str) -> FakeCluster:
    """The release set's FakeCluster; the others are stopped (their simulated controllers
    would otherwise keep ticking in this process and slow every request down)."""
    for other in [n for n in clusters if n != name]:
        clusters.pop(other).stop()
    if name not in clusters:
        fc = FakeCluster(releases=RELEASE_SETS[name].releases, tick_interval=TICK)
        for controller in controllers():
            # Only the operators of the families the set has: a cluster without Trainer runs
            # no Trainer (its simulation would fail on every tick looking for TrainJobs).
            with contextlib.suppress(ValueError):
                fc.resource(controller.resource)
                fc.add_controller(controller)
        fc.start()
        clusters[name] = fc
    return clusters[name]


def fresh_namespace(fc: FakeCluster) -> str:
    namespace = new_namespace(fc, "m")
    admin_setup(fc, namespace)
    return namespace


def stops_before_any_write(fc: FakeCluster, namespace: str, expect: Expect) -> None:
    """The script stops at `expect.refused` with nothing created."""
    fc.clear_requests()
    with client_for(fc) as client, pytest.raises(ConfigError) as caught:
        user_script(client, namespace)
    assert caught.value.fields == [expect.refused]
    for words in expect.refusal_says:
        assert words in str(caught.value)
    assert stored(fc, namespace) == {}
    assert [r for r in fc.requests if r.method != "GET"] == []


@pytest.mark.parametrize("name", sorted(RELEASE_SETS))
def test_the_user_script(clusters: dict[str, FakeCluster], name: str) -> None:
    expect = RELEASE_SETS[name]
    fc = cluster_for(clusters, name)
    namespace = fresh_namespace(fc)
    if expect.refused is not None:
        stops_before_any_write(fc, namespace, expect)
        return
    with client_for(fc) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a dropped field would be a PrunedFieldsWarning
            result = user_script(client, namespace)
        objects = stored(fc, namespace)
        [wrapper] = objects["appwrappers"]
        assert wrapper["apiVersion"] == expect.wrapper
        assert wrapper["metadata"]["labels"][QUEUE_LABEL] == QUEUE
        assert carries_user_settings(wrapper) == []
        [training] = objects[expect.training]
        assert carries_user_settings(training) == []
        assert training["metadata"]["labels"][QUEUE_LABEL] == QUEUE
        if expect.pod_field is not None:
            assert expect.pod_field in training["spec"]
        assert result.job_status.state in (
            JobState.PENDING, JobState.SUSPENDED, JobState.RUNNING, JobState.SUCCEEDED
        )  # fmt: skip
        wait_until(
            lambda: result.job.status().state is JobState.SUCCEEDED, "the job succeeded", poll=TICK
        )
        wait_until(
            lambda: "rayclusters" in stored(fc, namespace), "the wrapped RayCluster", poll=TICK
        )
        [ray] = stored(fc, namespace)["rayclusters"]
        assert carries_user_settings(ray) == []
        wait_until(
            lambda: result.cluster.status().state is ClusterState.READY, "cluster ready", poll=TICK
        )


def test_mcad_runs_the_script_with_the_cluster_left_to_mcads_queue(
    clusters: dict[str, FakeCluster],
) -> None:
    """Without `local_queue` the cluster is written in MCAD's v1beta1 and read back in it."""
    fc = cluster_for(clusters, "mcad-v1.40.0")
    namespace = fresh_namespace(fc)
    with client_for(fc) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = user_script(client, namespace, cluster_queue=None)
        [wrapper] = stored(fc, namespace)["appwrappers"]
        assert wrapper["apiVersion"] == RELEASE_SETS["mcad-v1.40.0"].wrapper
        assert QUEUE_LABEL not in (wrapper["metadata"].get("labels") or {})
        assert carries_user_settings(wrapper) == []
        # No MCAD controller is simulated: the AppWrapper waits in MCAD's queue.
        assert result.cluster_status.state is ClusterState.QUEUED
        assert result.cluster_status.queue is None
        assert "waiting for MCAD to dispatch it" in str(result.cluster_status.reason)
        wait_until(
            lambda: result.job.status().state is JobState.SUCCEEDED, "the job succeeded", poll=TICK
        )


#: Release sets where the script with GCS fault tolerance stops, and the field it names.
GCS_REFUSED = {"kuberay-v1.1.1": "spec.components[0].template.spec.gcsFaultToleranceOptions"}


@pytest.mark.parametrize("name", ["kuberay-v1.1.1", "kuberay-v1.7.0"])
def test_a_field_the_release_lacks_stops_the_script_before_any_write(
    clusters: dict[str, FakeCluster], name: str
) -> None:
    fc = cluster_for(clusters, name)
    namespace = fresh_namespace(fc)
    gcs: dict[str, Any] = {"enable_gcs_ft": True, "redis_address": "redis:6379"}
    with client_for(fc) as client:
        if name not in GCS_REFUSED:
            user_script(client, namespace, **gcs)
            [wrapper] = stored(fc, namespace)["appwrappers"]
            [component] = wrapper["spec"]["components"]
            assert component["template"]["spec"]["gcsFaultToleranceOptions"]["redisAddress"]
            return
        fc.clear_requests()
        with pytest.raises(ConfigError) as caught:
            user_script(client, namespace, **gcs)
    assert caught.value.fields == ["enable_gcs_ft"]
    message = str(caught.value)
    assert GCS_REFUSED[name] in message and "KubeRay v1.1.1" in message and "v1.4.2" in message
    assert stored(fc, namespace) == {}
    assert [r for r in fc.requests if r.method != "GET"] == []
