"""ClusterConfiguration: defaults, normalisation, and every bad parameter refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from flarekit.cluster import ClusterConfiguration, ConfigError, WorkerGroup


def problems(**kwargs: Any) -> dict[str, str]:
    """field -> problem line, for a configuration that must be refused."""
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(kwargs.pop("name", "demo"), **kwargs)
    return {p.field: str(p) for p in info.value.problems}


def test_defaults_follow_codeflare() -> None:
    c = ClusterConfiguration("demo")
    assert (c.head_cpu_requests, c.head_cpu_limits) == (2, 2)
    assert (c.head_memory_requests, c.head_memory_limits) == ("8G", "8G")
    assert (c.worker_cpu_requests, c.worker_cpu_limits) == (1, 1)
    assert (c.worker_memory_requests, c.worker_memory_limits) == ("2G", "2G")
    assert c.num_workers == 1 and not c.appwrapper and not c.enable_autoscaling
    assert c.ray_version == "2.47.1" and c.image == "rayproject/ray:2.47.1"
    assert c.validate().ok


def test_values_are_stored_normalised() -> None:
    c = ClusterConfiguration(
        "demo",
        head_cpu_requests=0.5,
        head_memory_requests="4",
        head_memory_limits=4.5,
        worker_memory_requests="512Mi",
        worker_memory_limits="1Gi",
        worker_extended_resource_requests={"nvidia.com/gpu": "2"},
        labels={
            "team": "ml",
            "kueue.x-k8s.io/queue-name": "q",
            "kueue.x-k8s.io/priority-class": "p",
        },
        worker_tolerations=[{"key": "gpu", "operator": "Exists"}],
        volumes=[{"name": "data", "emptyDir": {}}],
        volume_mounts=[{"name": "data", "mountPath": "/data"}],
    )
    from flarekit_models.core.v1 import Toleration, Volume, VolumeMount

    assert c.head_cpu_requests == "500m"
    assert (c.head_memory_requests, c.head_memory_limits) == ("4G", "4500M")
    assert (c.worker_memory_requests, c.worker_memory_limits) == ("512Mi", "1Gi")
    assert c.worker_extended_resource_requests == {"nvidia.com/gpu": 2}
    assert c.labels == {"team": "ml"} and (c.local_queue, c.priority_class) == ("q", "p")
    assert c.worker_tolerations == [Toleration(key="gpu", operator="Exists")]
    assert isinstance(c.volumes[0], Volume) and isinstance(c.volume_mounts[0], VolumeMount)


def test_ray_version_is_read_from_the_image() -> None:
    c = ClusterConfiguration("demo", image="quay.io/modh/ray:2.46.0-py311-cu121")
    assert c.ray_version == "2.46.0"
    c = ClusterConfiguration("demo", image="myorg/ray-app:latest")
    assert c.ray_version is None
    c = ClusterConfiguration("demo", ray_version="2.9.3")
    assert c.image == "rayproject/ray:2.9.3"


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"worker_memory_requests": "lots"}, "worker_memory_requests", "not a Kubernetes quantity"),
        ({"worker_memory_requests": "8Gb"}, "worker_memory_requests", "did you mean '8Gi'"),
        ({"head_memory_limits": "8Gb"}, "head_memory_limits", "or '8G'"),
        ({"worker_cpu_requests": "two"}, "worker_cpu_requests", "not a Kubernetes quantity"),
        ({"num_workers": -3}, "num_workers", "must not be negative"),
        ({"num_workers": "3"}, "num_workers", "expected an integer"),
        ({"worker_cpu_requests": 4, "worker_cpu_limits": 2}, "worker_cpu_limits", "below"),
        (
            {"head_memory_requests": "16Gi", "head_memory_limits": "8Gi"},
            "head_memory_limits",
            "below",
        ),
        (
            {"worker_extended_resource_requests": {"nvidia.com/gpu": -1}},
            "worker_extended_resource_requests['nvidia.com/gpu']",
            "must not be negative",
        ),
        (
            {"head_extended_resource_requests": {"example.com/fpga": 1}},
            "head_extended_resource_requests['example.com/fpga']",
            "unknown extended resource",
        ),
        (
            {"image": "rayproject/ray:2.9.0-py311", "ray_version": "2.47.1"},
            "image",
            "the image runs Ray 2.9.0 but ray_version is '2.47.1'",
        ),
        ({"name": "My_Cluster"}, "name", "not a valid name"),
        ({"namespace": "Team A"}, "namespace", "not a valid name"),
        ({"min_workers": 3, "max_workers": 1}, "min_workers", "greater than max_workers"),
        ({"num_workers": 5, "max_workers": 2}, "num_workers", "above max_workers"),
        ({"appwrapper": "yes"}, "appwrapper", "expected True or False"),
        ({"envs": {"DEBUG": 1}}, "envs['DEBUG']", "expected a string"),
        ({"image_pull_secrets": ["My Secret"]}, "image_pull_secrets[0]", "not a valid name"),
        ({"labels": {"team": "data science"}}, "labels['team']", "not a valid label value"),
        ({"local_queue": "Queue One"}, "local_queue", "not a valid name"),
        (
            {"labels": {"kueue.x-k8s.io/queue-name": "a"}, "local_queue": "b"},
            "labels['kueue.x-k8s.io/queue-name']",
            "contradicts local_queue='b'",
        ),
        ({"enable_gcs_ft": True}, "redis_address", "required with enable_gcs_ft=True"),
        ({"redis_address": "redis:6379"}, "redis_address", "only used with enable_gcs_ft=True"),
        (
            {"autoscaler_idle_timeout_seconds": 30},
            "autoscaler_idle_timeout_seconds",
            "only used with enable_autoscaling=True",
        ),
        (
            {"enable_gcs_ft": True, "redis_address": "r:1", "redis_password_secret": {"name": "s"}},
            "redis_password_secret",
            "'name' and 'key'",
        ),
        ({"worker_memory_requests": 8589934592}, "worker_memory_requests", "gigabytes"),
        ({"local_queue": "q" * 64}, "local_queue", "too long for a label value"),
        ({"envs": {"RAY_REDIS_ADDRESS": "r:6379"}}, "envs['RAY_REDIS_ADDRESS']", "KubeRay refuses"),
        (
            {"enable_gcs_ft": True, "redis_address": "r:1", "envs": {"REDIS_PASSWORD": "x"}},
            "envs['REDIS_PASSWORD']",
            "redis_password_secret",
        ),
        (
            {"envs": {"RAY_enable_autoscaler_v2": "1"}},
            "envs['RAY_enable_autoscaler_v2']",
            "enable_autoscaling=True",
        ),
        (
            {"volumes": [{"name": "v", "configMap": {"name": 3}}]},
            "volumes[0].configMap.name",
            "valid string",
        ),
        (
            {"volume_mounts": [{"name": "data", "mountPath": "/d"}]},
            "volume_mounts[0].name",
            "no volume of that name",
        ),
        ({"head_tolerations": ["gpu"]}, "head_tolerations[0]", "expected a dict"),
        (
            {"extended_resource_mapping": {"fpga": "FPGA"}},
            "extended_resource_mapping['fpga']",
            "domain prefix",
        ),
        (
            {"extended_resource_mapping": {"x.io/fpga": "CPU"}},
            "extended_resource_mapping['x.io/fpga']",
            "not a Ray custom resource name",
        ),
    ],
)
def test_bad_parameter_is_refused_by_name(kwargs: dict[str, Any], field: str, words: str) -> None:
    found = problems(**kwargs)
    assert field in found, found
    line = found[field]
    assert words in line
    assert "; expected " in line  # every problem says what would be accepted


def test_several_problems_reported_together() -> None:
    with pytest.raises(ConfigError) as info:
        ClusterConfiguration(
            "demo",
            worker_memory_requests="lots",
            worker_cpu_requests="two",
            num_workers=-3,
            head_cpu_requests=4,
            head_cpu_limits=2,
            head_extended_resource_requests={"nvidia.com/gpu": -1},
            image="rayproject/ray:2.9.0-py311",
            ray_version="2.47.1",
        )
    error = info.value
    assert error.fields == [
        "image",
        "head_cpu_limits",
        "head_extended_resource_requests['nvidia.com/gpu']",
        "worker_cpu_requests",
        "worker_memory_requests",
        "num_workers",
    ]
    lines = str(error).splitlines()
    assert lines[0] == "6 problems in ClusterConfiguration 'demo':"
    assert len(lines) == 7 and all(line.startswith("  - ") for line in lines[1:])


def test_worker_group_problems_carry_their_path() -> None:
    found = problems(
        worker_groups=[
            WorkerGroup(
                "gpu",
                memory_requests="8Gb",
                extended_resource_requests={"amd.com/gpu": 1.5},  # type: ignore[dict-item]
            ),
            WorkerGroup("gpu", num_workers=-1, image="rayproject/ray:2.1.0"),
        ]
    )
    assert set(found) == {
        "worker_groups[0].memory_requests",
        "worker_groups[0].extended_resource_requests['amd.com/gpu']",
        "worker_groups[1].name",
        "worker_groups[1].image",
        "worker_groups[1].num_workers",
    }
    assert "the same name as worker_groups[0].name" in found["worker_groups[1].name"]
    assert "did you mean '8Gi'" in found["worker_groups[0].memory_requests"]


def test_a_bad_ray_version_is_reported_once() -> None:
    found = problems(ray_version="two", worker_groups=[WorkerGroup("a"), WorkerGroup("b")])
    assert list(found) == ["ray_version"]


def test_worker_group_name_clashes_with_main_group() -> None:
    found = problems(worker_groups=[WorkerGroup("workers")])
    assert "the same name as worker_group_name" in found["worker_groups[0].name"]


def test_queue_names_may_be_subdomains() -> None:
    c = ClusterConfiguration("demo", local_queue="team.a-queue", priority_class="p.high")
    assert (c.local_queue, c.priority_class) == ("team.a-queue", "p.high")
    c = ClusterConfiguration(
        "demo",
        enable_autoscaling=True,
        envs={"RAY_enable_autoscaler_v2": "1", "REDIS_PASSWORD": "x"},
    )
    assert c.envs["RAY_enable_autoscaler_v2"] == "1"


def test_user_mapping_adds_devices() -> None:
    c = ClusterConfiguration(
        "demo",
        extended_resource_mapping={"example.com/fpga": "FPGA"},
        worker_extended_resource_requests={"example.com/fpga": 2, "nvidia.com/gpu": 1},
    )
    assert c.resource_mapping["example.com/fpga"] == "FPGA"
    assert c.resource_mapping["nvidia.com/gpu"] == "GPU"


def test_validate_sees_changes_after_construction() -> None:
    c = ClusterConfiguration("demo")
    c.worker_memory_requests = "8Gb"
    c.num_workers = -1
    report = c.validate()
    assert report.fields == ["worker_memory_requests", "num_workers"]
    from flarekit.cluster import render

    with pytest.raises(ConfigError):
        render(c)


def test_models_are_accepted_as_they_are() -> None:
    from flarekit_models.core.v1 import Toleration, Volume, VolumeMount

    volume = Volume.model_validate({"name": "data", "emptyDir": {}})
    mount = VolumeMount(name="data", mount_path="/data")
    toleration = Toleration(key="gpu", operator="Exists")
    c = ClusterConfiguration(
        "demo", volumes=[volume], volume_mounts=[mount], head_tolerations=[toleration]
    )
    assert (
        c.volumes == [volume] and c.volume_mounts == [mount] and c.head_tolerations == [toleration]
    )


def test_import_and_a_plain_configuration_are_cheap() -> None:
    import subprocess
    import sys

    # The models' packages are entry points that define nothing until a model is asked
    # for: imported, they load no model module (a private module of flarekit_models).
    code = (
        "import sys, flarekit.cluster; flarekit.cluster.ClusterConfiguration('demo'); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'kubernetes', 'pydantic', 'yaml'} | "
        "{m for m in sys.modules if m.startswith('flarekit_models') and '._' in m}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
