"""Pod overrides (``head_pod_template``, ``worker_pod_template``, ``WorkerGroup.pod_template``):
typed storage, the merge rules, conflicts with the parameters, and reading them back."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_support import crd_schema, full_config

from flarekit.cluster import (
    ClusterConfiguration,
    ConfigError,
    WorkerGroup,
    from_raycluster,
    render,
    render_raycluster,
    to_dict,
)
from flarekit_models.core.v1 import (
    Affinity,
    PodSecurityContext,
    PodSpec,
    PodTemplateSpec,
    Toleration,
)

AFFINITY: dict[str, Any] = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 1,
                "preference": {"matchExpressions": [{"key": "pool", "operator": "Exists"}]},
            }
        ]
    }
}


def _pods(config: ClusterConfiguration) -> list[dict[str, Any]]:
    """The pod templates of the rendered RayCluster: head, then each worker group."""
    spec = to_dict(render_raycluster(config))["spec"]
    return [spec["headGroupSpec"]["template"]] + [g["template"] for g in spec["workerGroupSpecs"]]


def _problems(**options: Any) -> dict[str, tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        ClusterConfiguration("demo", **options)
    return {p.field: (p.message, p.expected) for p in caught.value.problems}


# --- what the user gives, and what is stored ---------------------------------------------


def test_a_model_and_its_json_render_the_same_and_are_stored_as_the_model() -> None:
    model = PodTemplateSpec(
        spec=PodSpec(
            containers=[],
            affinity=Affinity.model_validate(AFFINITY),
            service_account_name="ray",
            scheduler_name="default-scheduler",
            security_context=PodSecurityContext(run_as_non_root=True, fs_group=1000),
        )
    )
    as_json = {
        "spec": {
            "affinity": AFFINITY,
            "serviceAccountName": "ray",
            "schedulerName": "default-scheduler",
            "securityContext": {"runAsNonRoot": True, "fsGroup": 1000},
        }
    }
    from_model = ClusterConfiguration("demo", head_pod_template=model)
    from_json = ClusterConfiguration("demo", head_pod_template=as_json)
    assert isinstance(from_json.head_pod_template, PodTemplateSpec)
    assert from_json.head_pod_template == model
    assert to_dict(from_json) == to_dict(from_model)
    head = _pods(from_json)[0]["spec"]
    assert head["serviceAccountName"] == "ray"
    assert head["schedulerName"] == "default-scheduler"
    assert head["securityContext"] == {"runAsNonRoot": True, "fsGroup": 1000}
    assert head["affinity"] == AFFINITY


def test_each_pod_gets_only_its_own_override() -> None:
    config = ClusterConfiguration(
        "demo",
        head_pod_template={"spec": {"serviceAccountName": "head"}},
        worker_pod_template={"spec": {"serviceAccountName": "main"}},
        worker_groups=[
            WorkerGroup("gpu", pod_template={"spec": {"serviceAccountName": "gpu"}}),
            WorkerGroup("plain"),
        ],
    )
    accounts = [pod["spec"].get("serviceAccountName") for pod in _pods(config)]
    assert accounts == ["head", "main", "gpu", None]


def test_fields_flarekit_does_not_know_are_kept() -> None:
    config = ClusterConfiguration(
        "demo",
        head_pod_template={
            "metadata": {"annotations": {"a": "1"}},
            "spec": {
                "someFutureField": {"x": [1, 2]},
                "containers": [{"name": "ray-head", "futureContainerField": True}],
            },
            "futureTemplateField": "kept",
        },
    )
    head = _pods(config)[0]
    assert head["futureTemplateField"] == "kept"
    assert head["spec"]["someFutureField"] == {"x": [1, 2]}
    assert head["spec"]["containers"][0]["futureContainerField"] is True
    assert head["metadata"] == {"annotations": {"a": "1"}}


def test_rendering_shares_nothing_with_the_configuration() -> None:
    override = PodTemplateSpec.model_validate(
        {"spec": {"containers": [{"name": "side", "image": "busybox"}], "affinity": AFFINITY}}
    )
    before = override.to_dict()
    config = ClusterConfiguration("demo", head_pod_template=override)
    cluster = render_raycluster(config)
    assert cluster.spec is not None
    head = cluster.spec.head_group_spec.template.spec
    assert head is not None and head.affinity is not None
    head.containers[1].image = "changed"
    head.affinity.node_affinity = None
    assert override.to_dict() == before
    assert to_dict(config) == to_dict(ClusterConfiguration("demo", head_pod_template=before))


# --- the merge rules ----------------------------------------------------------------------


def test_the_ray_container_merges_field_by_field() -> None:
    config = ClusterConfiguration(
        "demo",
        envs={"A": "1"},
        volumes=[{"name": "data", "emptyDir": {}}],
        volume_mounts=[{"name": "data", "mountPath": "/data"}],
        head_pod_template={
            "spec": {
                "containers": [
                    {
                        "name": "ray-head",
                        "ports": [{"containerPort": 8080, "name": "metrics"}],
                        "securityContext": {"allowPrivilegeEscalation": False},
                        "env": [
                            {
                                "name": "POD",
                                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                            }
                        ],
                        "resources": {"limits": {"ephemeral-storage": "1Gi"}},
                        "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                    }
                ],
                "volumes": [{"name": "scratch", "emptyDir": {}}],
            }
        },
    )
    spec = _pods(config)[0]["spec"]
    [ray] = spec["containers"]
    assert ray["name"] == "ray-head" and ray["image"] == config.image
    assert ray["ports"] == [{"containerPort": 8080, "name": "metrics"}]
    assert ray["securityContext"] == {"allowPrivilegeEscalation": False}
    assert [e["name"] for e in ray["env"]] == ["A", "POD"]
    assert ray["resources"]["limits"] == {"cpu": 2, "memory": "8G", "ephemeral-storage": "1Gi"}
    assert ray["resources"]["requests"] == {"cpu": 2, "memory": "8G"}
    assert [m["mountPath"] for m in ray["volumeMounts"]] == ["/data", "/scratch"]
    assert [v["name"] for v in spec["volumes"]] == ["data", "scratch"]


def test_other_containers_come_after_the_ray_container() -> None:
    config = ClusterConfiguration(
        "demo",
        worker_pod_template={
            "spec": {
                "containers": [
                    {"name": "log-shipper", "image": "fluent/fluent-bit:3.0"},
                    {"name": "ray-worker", "args": ["--verbose"]},
                ],
                "initContainers": [{"name": "warm-up", "image": "busybox", "command": ["true"]}],
            }
        },
    )
    worker = _pods(config)[1]["spec"]
    assert [c["name"] for c in worker["containers"]] == ["ray-worker", "log-shipper"]
    assert worker["containers"][0]["args"] == ["--verbose"]
    assert worker["initContainers"] == [
        {"name": "warm-up", "image": "busybox", "command": ["true"]}
    ]


def test_maps_merge_by_key_and_tolerations_and_pull_secrets_are_appended() -> None:
    config = ClusterConfiguration(
        "demo",
        image_pull_secrets=["quay"],
        head_node_selector={"pool": "cpu"},
        head_tolerations=[{"key": "head", "operator": "Exists"}],
        head_pod_template={
            "metadata": {"labels": {"team": "a"}},
            "spec": {
                "nodeSelector": {"zone": "z1"},
                "tolerations": [
                    {"key": "head", "operator": "Exists"},
                    {"key": "spot", "operator": "Exists", "effect": "NoSchedule"},
                ],
                "imagePullSecrets": [{"name": "quay"}, {"name": "ghcr"}],
            },
        },
    )
    head = _pods(config)[0]
    assert head["metadata"]["labels"] == {"team": "a"}
    assert head["spec"]["nodeSelector"] == {"pool": "cpu", "zone": "z1"}
    assert [t["key"] for t in head["spec"]["tolerations"]] == ["head", "spot"]
    assert head["spec"]["imagePullSecrets"] == [{"name": "quay"}, {"name": "ghcr"}]


def test_a_group_override_adds_to_the_groups_own_labels() -> None:
    group = WorkerGroup(
        "gpu", labels={"pool": "a100"}, pod_template={"metadata": {"labels": {"team": "a"}}}
    )
    config = ClusterConfiguration("demo", worker_groups=[group])
    assert _pods(config)[2]["metadata"]["labels"] == {"pool": "a100", "team": "a"}


def test_the_wrapped_cluster_carries_the_overrides() -> None:
    config = ClusterConfiguration(
        "demo",
        appwrapper=True,
        local_queue="lq",
        head_pod_template={"spec": {"serviceAccountName": "ray", "schedulerName": "custom"}},
    )
    wrapper = to_dict(render(config))
    inner = wrapper["spec"]["components"][0]["template"]
    head = inner["spec"]["headGroupSpec"]["template"]["spec"]
    assert (head["serviceAccountName"], head["schedulerName"]) == ("ray", "custom")


def test_the_merged_cluster_is_admitted_by_the_kuberay_crd() -> None:
    from flarekit_testing.apiserver._structural import admit

    config = full_config(
        head_pod_template={
            "spec": {
                "affinity": AFFINITY,
                "serviceAccountName": "ray",
                "schedulerName": "default-scheduler",
                "securityContext": {"runAsNonRoot": True},
                "containers": [{"name": "side", "image": "busybox"}],
            }
        },
        worker_pod_template={"spec": {"priorityClassName": "high"}},
    )
    obj = to_dict(render_raycluster(config))
    result = admit(obj, crd_schema("kuberay", "v1.7.0", "rayclusters", "v1"))
    assert result.causes == [] and result.unknown_fields == []


# --- conflicts with the parameters --------------------------------------------------------


def test_what_a_parameter_sets_is_refused_naming_the_path_and_the_parameter() -> None:
    problems = _problems(
        envs={"A": "1"},
        head_node_selector={"pool": "cpu"},
        head_extended_resource_requests={"nvidia.com/gpu": 1},
        volumes=[{"name": "data", "emptyDir": {}}],
        volume_mounts=[{"name": "data", "mountPath": "/data"}],
        head_pod_template={
            "spec": {
                "nodeSelector": {"pool": "gpu"},
                "volumes": [{"name": "data", "emptyDir": {}}],
                "containers": [
                    {
                        "name": "ray-head",
                        "image": "rayproject/ray:2.47.1",
                        "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}],
                        "resources": {
                            "requests": {"cpu": "1", "ephemeral-storage": "1Gi"},
                            "limits": {"memory": "8G", "nvidia.com/gpu": 1},
                        },
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    }
                ],
            }
        },
    )
    ray = "head_pod_template.spec.containers[0]"
    owners = {
        field: message.removeprefix("flarekit sets this from ")
        for field, (message, _) in problems.items()
    }
    assert owners == {
        f"{ray}.image": "image",
        f"{ray}.env[1].name": "envs",
        f"{ray}.resources.requests['cpu']": "head_cpu_requests",
        f"{ray}.resources.limits['memory']": "head_memory_limits",
        f"{ray}.resources.limits['nvidia.com/gpu']": "head_extended_resource_requests",
        f"{ray}.volumeMounts[0].mountPath": "volume_mounts",
        "head_pod_template.spec.nodeSelector['pool']": "head_node_selector",
        "head_pod_template.spec.volumes[0].name": "volumes",
    }
    assert all("set it with" in expected for _, expected in problems.values())


def test_worker_conflicts_name_the_workers_parameters() -> None:
    problems = _problems(
        worker_pod_template={
            "spec": {"containers": [{"name": "ray-worker", "resources": {"limits": {"cpu": 4}}}]}
        },
        worker_groups=[
            WorkerGroup(
                "gpu",
                image="rayproject/ray:2.47.1-gpu",
                envs={"MODE": "gpu"},
                labels={"pool": "a100"},
                pod_template={
                    "metadata": {"labels": {"pool": "h100"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "ray-worker",
                                "image": "other",
                                "env": [{"name": "MODE", "value": "x"}],
                            }
                        ]
                    },
                },
            )
        ],
    )
    group = "worker_groups[0].pod_template"
    assert {f: m.removeprefix("flarekit sets this from ") for f, (m, _) in problems.items()} == {
        "worker_pod_template.spec.containers[0].resources.limits['cpu']": "worker_cpu_limits",
        f"{group}.metadata.labels['pool']": "worker_groups[0].labels",
        f"{group}.spec.containers[0].image": "worker_groups[0].image",
        f"{group}.spec.containers[0].env[0].name": "envs or worker_groups[0].envs",
    }


def test_a_parameter_left_unset_leaves_the_field_to_the_override() -> None:
    config = ClusterConfiguration(
        "demo",
        head_cpu_limits=None,
        head_pod_template={
            "spec": {"containers": [{"name": "ray-head", "resources": {"limits": {"cpu": 3}}}]}
        },
    )
    limits = _pods(config)[0]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"cpu": 3, "memory": "8G"}


def test_a_configuration_changed_into_a_conflict_is_refused_before_rendering() -> None:
    config = ClusterConfiguration("demo", head_pod_template={"spec": {"nodeSelector": {"a": "b"}}})
    config.head_node_selector = {"a": "c"}
    assert config.validate().fields == ["head_pod_template.spec.nodeSelector['a']"]
    with pytest.raises(ConfigError, match=r"head_node_selector"):
        render(config)


# --- the override itself ------------------------------------------------------------------


def test_a_bad_override_is_named_by_its_path() -> None:
    problems = _problems(
        head_pod_template={"spec": {"serviceAccountName": 3, "tolerations": "all"}},
        worker_pod_template=["not", "a", "template"],
        worker_groups=[WorkerGroup("g", pod_template={"spec": {"containers": [{"image": "x"}]}})],
    )
    assert set(problems) == {
        "head_pod_template.spec.serviceAccountName",
        "head_pod_template.spec.tolerations",
        "worker_pod_template",
        "worker_groups[0].pod_template.spec.containers[0].name",
    }
    assert "PodTemplateSpec or a dict" in problems["worker_pod_template"][0]


def test_python_attribute_names_in_json_are_refused_other_unknown_keys_kept() -> None:
    problems = _problems(
        head_pod_template={
            "spec": {
                "service_account_name": "ray",
                "containers": [{"name": "ray-head", "image_pull_policy": "Always"}],
                "futureField": 1,
            }
        }
    )
    assert problems == {
        "head_pod_template.spec.service_account_name": (
            "a Python attribute name, not a Kubernetes JSON field name",
            "'serviceAccountName'",
        ),
        "head_pod_template.spec.containers[0].image_pull_policy": (
            "a Python attribute name, not a Kubernetes JSON field name",
            "'imagePullPolicy'",
        ),
    }


def test_an_added_container_needs_an_image() -> None:
    problems = _problems(head_pod_template={"spec": {"containers": [{"name": "ray"}]}})
    message, expected = problems["head_pod_template.spec.containers[0].image"]
    assert "needs an image" in message and "'ray-head'" in expected


def test_parameter_problems_come_first_then_conflicts() -> None:
    override = {"spec": {"nodeSelector": {"a": "b"}}}
    bad_cpu = _problems(head_node_selector={"a": "c"}, head_pod_template=override,
                        head_cpu_requests="lots")  # fmt: skip
    assert list(bad_cpu) == ["head_cpu_requests"]
    assert list(_problems(head_node_selector={"a": "c"}, head_pod_template=override)) == [
        "head_pod_template.spec.nodeSelector['a']"
    ]


# --- reading back -------------------------------------------------------------------------


def _with_overrides(**options: Any) -> ClusterConfiguration:
    return full_config(
        head_pod_template={
            "metadata": {"annotations": {"scrape": "true"}},
            "spec": {
                "affinity": AFFINITY,
                "serviceAccountName": "ray",
                "schedulerName": "default-scheduler",
                "securityContext": {"runAsNonRoot": True},
                "containers": [
                    {
                        "name": "ray-head",
                        "ports": [{"containerPort": 8080}],
                        "env": [
                            {
                                "name": "POD",
                                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                            }
                        ],
                        "resources": {"limits": {"ephemeral-storage": "1Gi"}},
                    },
                    {"name": "side", "image": "busybox"},
                ],
            },
        },
        worker_pod_template={
            "spec": {
                "containers": [
                    {"name": "ray-worker", "env": [{"name": "ONLY_MAIN", "value": "1"}]}
                ],
                "volumes": [{"name": "scratch", "emptyDir": {}}],
            }
        },
        worker_groups=[
            WorkerGroup(
                "accel",
                labels={"pool": "gaudi"},
                pod_template={
                    "metadata": {"annotations": {"team": "a"}},
                    "spec": {"hostIPC": True},
                },
            )
        ],
        **options,
    )


@pytest.mark.parametrize("wrapped", [False, True], ids=["raycluster", "appwrapper"])
def test_overrides_read_back_equal(wrapped: bool) -> None:
    config = _with_overrides(appwrapper=wrapped)
    assert from_raycluster(render(config)) == config
    assert from_raycluster(to_dict(config)) == config


def test_what_a_parameter_can_hold_reads_back_into_the_parameter() -> None:
    config = ClusterConfiguration(
        "demo",
        head_pod_template={
            "spec": {"tolerations": [{"key": "spot", "operator": "Exists"}], "hostPID": True}
        },
    )
    back = from_raycluster(render(config))
    assert back.head_tolerations == [Toleration(key="spot", operator="Exists")]
    assert back.head_pod_template == PodTemplateSpec(spec=PodSpec(containers=[], host_pid=True))
    assert to_dict(back) == to_dict(config)


def test_a_foreign_ray_container_name_becomes_flarekits() -> None:
    obj = to_dict(ClusterConfiguration("demo"))
    head = obj["spec"]["headGroupSpec"]["template"]["spec"]
    head["containers"][0]["name"] = "main"
    head["containers"][0]["livenessProbe"] = {"exec": {"command": ["true"]}}
    config = from_raycluster(obj)
    template = config.head_pod_template
    assert isinstance(template, PodTemplateSpec) and template.spec is not None
    [ray] = template.spec.containers
    assert ray.name == "ray-head" and ray.liveness_probe is not None
    assert _pods(config)[0]["spec"]["containers"][0]["livenessProbe"] == {
        "exec": {"command": ["true"]}
    }


def test_a_rendered_cluster_without_overrides_reads_back_without_any() -> None:
    config = from_raycluster(render(full_config()))
    assert config.head_pod_template is None and config.worker_pod_template is None
    assert all(group.pod_template is None for group in config.worker_groups)


# --- the documentation --------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[3] / "docs" / "pod-templates.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_documented_example_renders_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    [example] = _blocks("python")
    exec(compile(example, str(DOC), "exec"), {})
    out = yaml.safe_load(capsys.readouterr().out)
    head = out["spec"]["headGroupSpec"]["template"]["spec"]
    assert (head["serviceAccountName"], head["schedulerName"]) == ("ray", "default-scheduler")
    main, gpu = out["spec"]["workerGroupSpecs"]
    containers = main["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["ray-worker", "log-shipper"]
    assert containers[0]["ports"] == [{"containerPort": 8080, "name": "metrics"}]
    assert "podAntiAffinity" in main["template"]["spec"]["affinity"]
    assert gpu["template"]["spec"]["priorityClassName"] == "high"


def test_the_documented_error_is_the_one_raised() -> None:
    [shown] = _blocks("text")
    with pytest.raises(ConfigError) as caught:
        ClusterConfiguration(
            "demo",
            head_node_selector={"pool": "cpu"},
            head_pod_template={
                "spec": {
                    "nodeSelector": {"pool": "gpu"},
                    "containers": [{"name": "ray-head", "image": "my/ray:2.47.1"}],
                }
            },
        )
    assert shown.strip() == f"ConfigError: {caught.value}"
