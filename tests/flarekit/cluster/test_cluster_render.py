"""Rendering a configuration: RayCluster / AppWrapper structure, Kueue labels, CRD admission, YAML."""

from __future__ import annotations

import pytest
import yaml
from cluster_support import crd_schema, full_config

from flarekit.cluster import (
    ClusterConfiguration,
    render,
    render_appwrapper,
    render_raycluster,
    to_dict,
    to_yaml,
)
from flarekit.cluster._render import decode_ray_resources, encode_ray_resources, ray_start_params

QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"


def test_raycluster_structure() -> None:
    d = to_dict(render_raycluster(full_config()))
    assert (d["apiVersion"], d["kind"]) == ("ray.io/v1", "RayCluster")
    meta = d["metadata"]
    assert meta["name"] == "demo" and meta["namespace"] == "team-a"
    assert meta["labels"] == {"team": "a", QUEUE: "team-a-queue", PRIORITY: "high"}
    assert meta["annotations"] == {"note": "nightly training"}
    spec = d["spec"]
    assert spec["rayVersion"] == "2.47.1"
    assert spec["enableInTreeAutoscaling"] is True
    assert spec["autoscalerOptions"] == {"idleTimeoutSeconds": 120}
    assert spec["gcsFaultToleranceOptions"] == {
        "redisAddress": "redis.team-a.svc:6379",
        "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis", "key": "password"}}},
        "externalStorageNamespace": "demo-ft",
    }

    head = spec["headGroupSpec"]
    assert head["rayStartParams"] == {"num-gpus": "1"}
    pod = head["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == "ray-head"
    assert container["image"] == "quay.io/modh/ray:2.47.1-py311-cu121"
    assert container["resources"] == {
        "requests": {"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": 1},
        "limits": {"cpu": 1, "memory": "4Gi", "nvidia.com/gpu": 1},
    }
    assert container["env"] == [{"name": "HF_HOME", "value": "/data/hf"}]
    assert container["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert pod["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    assert pod["tolerations"] == [{"key": "head", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["nodeSelector"] == {"pool": "cpu"}
    assert pod["imagePullSecrets"] == [{"name": "quay-pull"}]

    main, accel = spec["workerGroupSpecs"]
    assert (main["groupName"], main["replicas"], main["minReplicas"], main["maxReplicas"]) == (
        "workers",
        2,
        1,
        4,
    )
    assert main["rayStartParams"] == {"num-gpus": "2", "resources": '"{\\"TPU\\": 4}"'}
    worker = main["template"]["spec"]["containers"][0]
    assert worker["name"] == "ray-worker"
    assert worker["resources"]["limits"] == {
        "cpu": 1,
        "memory": "2G",
        "google.com/tpu": 4,
        "nvidia.com/gpu": 2,
    }
    assert main["template"]["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert (accel["groupName"], accel["replicas"], accel["minReplicas"]) == ("accel", 1, 1)
    assert accel["rayStartParams"] == {"resources": '"{\\"HPU\\": 8}"'}
    assert accel["template"]["spec"]["nodeSelector"] == {"pool": "gaudi"}
    assert accel["template"]["spec"]["containers"][0]["image"] == container["image"]


def test_minimal_raycluster_has_no_optional_parts() -> None:
    d = to_dict(ClusterConfiguration("mini"))
    assert set(d["metadata"]) == {"name"}
    assert set(d["spec"]) == {"rayVersion", "headGroupSpec", "workerGroupSpecs"}
    assert d["spec"]["headGroupSpec"]["rayStartParams"] == {}
    assert set(d["spec"]["headGroupSpec"]["template"]["spec"]) == {"containers"}


def test_gpus_of_several_vendors_add_up_and_custom_mappings_apply() -> None:
    mapping = {"nvidia.com/gpu": "GPU", "intel.com/gpu": "GPU", "x.io/fpga": "FPGA"}
    params = ray_start_params({"nvidia.com/gpu": 1, "intel.com/gpu": 2, "x.io/fpga": 3}, mapping)
    assert params == {"num-gpus": "3", "resources": '"{\\"FPGA\\": 3}"'}
    assert ray_start_params({}, mapping) == {}
    c = ClusterConfiguration(
        "demo",
        extended_resource_mapping={"x.io/fpga": "FPGA"},
        worker_extended_resource_requests={"x.io/fpga": 2},
    )
    group = to_dict(c)["spec"]["workerGroupSpecs"][0]
    assert group["rayStartParams"] == {"resources": '"{\\"FPGA\\": 2}"'}


def test_ray_resources_encoding_round_trips() -> None:
    encoded = encode_ray_resources({"TPU": 4, "HPU": 2})
    assert encoded == '"{\\"HPU\\": 2, \\"TPU\\": 4}"'
    assert decode_ray_resources(encoded) == {"HPU": 2, "TPU": 4}
    assert decode_ray_resources('{"A": 1}') == {"A": 1}
    assert decode_ray_resources("'{\"A\": 1}'") == {"A": 1}
    assert decode_ray_resources('"{}"') == {}
    assert decode_ray_resources("not json") == {}


@pytest.mark.parametrize("appwrapper", [False, True])
def test_queue_label_is_never_dropped(appwrapper: bool) -> None:
    c = ClusterConfiguration("demo", local_queue="q", priority_class="p", appwrapper=appwrapper)
    top = to_dict(render(c))
    assert top["kind"] == ("AppWrapper" if appwrapper else "RayCluster")
    assert top["metadata"]["labels"] == {QUEUE: "q", PRIORITY: "p"}
    # The same label given through `labels` ends up in the same place.
    c = ClusterConfiguration("demo", labels={QUEUE: "q"}, appwrapper=appwrapper)
    assert to_dict(render(c))["metadata"]["labels"] == {QUEUE: "q"}
    # A standalone RayCluster of an AppWrapper configuration still carries it.
    assert to_dict(render_raycluster(c))["metadata"]["labels"] == {QUEUE: "q"}


def test_appwrapper_holds_the_raycluster_and_the_kueue_labels() -> None:
    c = full_config(appwrapper=True)
    wrapper = to_dict(render(c))
    assert (wrapper["apiVersion"], wrapper["kind"]) == (
        "workload.codeflare.dev/v1beta2",
        "AppWrapper",
    )
    assert wrapper["metadata"] == {
        "name": "demo",
        "namespace": "team-a",
        "labels": {QUEUE: "team-a-queue", PRIORITY: "high"},
    }
    (component,) = wrapper["spec"]["components"]
    inner = component["template"]
    assert inner["kind"] == "RayCluster" and inner["metadata"]["name"] == "demo"
    # Kueue admits the AppWrapper; the wrapped RayCluster keeps only the user's labels.
    assert inner["metadata"]["labels"] == {"team": "a"}
    standalone = to_dict(render_raycluster(c))
    assert inner["spec"] == standalone["spec"]
    assert to_dict(render_appwrapper(full_config())) == wrapper


def test_rendered_objects_are_valid_models() -> None:
    from flarekit_models.appwrapper.v1beta2 import AppWrapper
    from flarekit_models.ray.v1 import RayCluster

    cluster = render_raycluster(full_config())
    assert isinstance(cluster, RayCluster)
    assert RayCluster.model_validate(cluster.to_dict()).to_dict() == cluster.to_dict()
    wrapper = render(full_config(appwrapper=True))
    assert isinstance(wrapper, AppWrapper)
    assert AppWrapper.model_validate(wrapper.to_dict()).to_dict() == wrapper.to_dict()


def _configs() -> list[ClusterConfiguration]:
    from flarekit import WorkerGroup

    override = {
        "metadata": {"annotations": {"sidecar": "on"}},
        "spec": {
            "serviceAccountName": "ray",
            "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": {"matchExpressions": [
                    {"key": "zone", "operator": "In", "values": ["a"]}]}}]}},
            "containers": [{"name": "ray-worker", "command": ["ray"], "ports": [
                {"containerPort": 8265, "name": "dashboard"}]}],
        },
    }  # fmt: skip
    return [
        ClusterConfiguration("minimal"),
        full_config(),
        full_config(appwrapper=True),
        ClusterConfiguration(
            "bounds",
            num_workers=2**31 - 1,
            max_workers=2**31 - 1,
            worker_cpu_requests=2**40,
            worker_cpu_limits=2**40,
            worker_memory_requests="7Ei",
            worker_memory_limits="7Ei",
        ),
        ClusterConfiguration(
            "overrides",
            worker_pod_template=override,
            head_pod_template={"spec": {"schedulerName": "kueue"}},
            worker_groups=[WorkerGroup("extra", num_workers=1, pod_template=override)],
        ),
    ]


@pytest.mark.parametrize("config", _configs(), ids=lambda c: c.name)
def test_every_kind_of_configuration_renders_what_the_models_accept(
    config: ClusterConfiguration,
) -> None:
    # Rendering builds the models without their validators (the configuration was checked
    # when it was made); the models, validating the result, must agree with every value.
    rendered = render(config)
    data = rendered.to_dict()
    validated = type(rendered).model_validate(data)
    assert validated.to_dict() == data
    assert validated == rendered
    assert validated.to_json() == rendered.to_json()


def test_raycluster_is_admitted_by_the_kuberay_crd() -> None:
    from flarekit_testing.apiserver._structural import admit

    obj = to_dict(render_raycluster(full_config()))
    result = admit(obj, crd_schema("kuberay", "v1.7.0", "rayclusters", "v1"))
    assert result.causes == [] and result.unknown_fields == []


@pytest.mark.parametrize("tag", ["v1.1.1", "v1.4.2", "v1.7.0"])
def test_plain_cluster_fits_every_pinned_kuberay(tag: str) -> None:
    from flarekit_testing.apiserver._structural import admit

    obj = to_dict(
        full_config(
            enable_gcs_ft=False,
            redis_address=None,
            redis_password_secret=None,
            external_storage_namespace=None,
        )
    )
    result = admit(obj, crd_schema("kuberay", tag, "rayclusters", "v1"))
    assert result.causes == [] and result.unknown_fields == []


def test_appwrapper_is_admitted_by_its_crd_and_the_inner_cluster_by_kuberay() -> None:
    from flarekit_testing.apiserver._structural import admit

    obj = to_dict(render(full_config(appwrapper=True)))
    result = admit(obj, crd_schema("appwrapper", "v1.2.1", "appwrappers", "v1beta2"))
    assert result.causes == [] and result.unknown_fields == []
    assert (
        result.obj["spec"]["components"][0]["template"] == obj["spec"]["components"][0]["template"]
    )
    inner = admit(
        obj["spec"]["components"][0]["template"],
        crd_schema("kuberay", "v1.7.0", "rayclusters", "v1"),
    )
    assert inner.causes == [] and inner.unknown_fields == []


GOLDEN = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  labels:
    kueue.x-k8s.io/queue-name: team-a-queue
  name: mini
  namespace: team-a
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - image: rayproject/ray:2.47.1
          name: ray-head
          resources:
            limits:
              cpu: 2
              memory: 8G
            requests:
              cpu: 2
              memory: 8G
  rayVersion: 2.47.1
  workerGroupSpecs:
  - groupName: workers
    maxReplicas: 2
    minReplicas: 2
    rayStartParams:
      num-gpus: '1'
    replicas: 2
    template:
      spec:
        containers:
        - image: rayproject/ray:2.47.1
          name: ray-worker
          resources:
            limits:
              cpu: 1
              memory: 2G
              nvidia.com/gpu: 1
            requests:
              cpu: 1
              memory: 2G
              nvidia.com/gpu: 1
"""


def test_yaml_golden() -> None:
    c = ClusterConfiguration(
        "mini",
        namespace="team-a",
        num_workers=2,
        worker_extended_resource_requests={"nvidia.com/gpu": 1},
        local_queue="team-a-queue",
    )
    assert to_yaml(c) == GOLDEN


def test_yaml_is_stable_and_loads_back() -> None:
    a = full_config(labels={"b": "2", "a": "1"}, envs={"Y": "1", "X": "2"})
    b = full_config(labels={"a": "1", "b": "2"}, envs={"Y": "1", "X": "2"})
    text = to_yaml(a)
    assert text == to_yaml(a) == to_yaml(b)
    assert yaml.safe_load(text) == to_dict(a)
    assert "&" not in text and "*" not in text  # no anchors or aliases
    assert to_yaml(render(a)) == text  # a model renders the same as its configuration
