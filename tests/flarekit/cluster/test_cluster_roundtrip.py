"""from_raycluster: configuration -> RayCluster -> configuration, and objects made by others."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_support import full_config

from flarekit.cluster import (
    ClusterConfiguration,
    ConfigError,
    WorkerGroup,
    from_raycluster,
    render,
    render_raycluster,
    to_dict,
)
from flarekit_models.core.v1 import PodTemplateSpec

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples"


CONFIGS: dict[str, Callable[[], ClusterConfiguration]] = {
    "defaults": lambda: ClusterConfiguration("demo"),
    "full": full_config,
    "full-wrapped": lambda: full_config(appwrapper=True),
    "autoscaling-defaults": lambda: ClusterConfiguration(
        "demo", enable_autoscaling=True, min_workers=0, max_workers=8
    ),
    "head-only": lambda: ClusterConfiguration("solo", num_workers=0, head_cpu_limits=None),
    "custom-device": lambda: ClusterConfiguration(
        "fpga",
        extended_resource_mapping={"x.io/fpga": "FPGA"},
        worker_extended_resource_requests={"x.io/fpga": 2},
    ),
    "floats-and-bare-memory": lambda: ClusterConfiguration(
        "demo", worker_cpu_requests=0.25, worker_memory_requests=1.5, worker_memory_limits="3"
    ),
    "group-image": lambda: ClusterConfiguration(
        "demo",
        image="rayproject/ray:2.9.0-py311",
        worker_groups=[WorkerGroup("gpu", image="rayproject/ray:2.9.0-py311-gpu", num_workers=0)],
    ),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_config_survives_the_round_trip(name: str) -> None:
    config = CONFIGS[name]()
    mapping = config.extended_resource_mapping
    assert from_raycluster(render(config), extended_resource_mapping=mapping) == config
    # From the JSON as a server or a file would give it, too.
    assert from_raycluster(to_dict(config), extended_resource_mapping=mapping) == config
    assert (
        from_raycluster(
            yaml.safe_load(yaml.safe_dump(to_dict(config))), extended_resource_mapping=mapping
        )
        == config
    )


def test_round_trip_detects_a_difference() -> None:
    config = full_config()
    obj = to_dict(render_raycluster(config))
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = 3
    back = from_raycluster(obj)
    assert back != config and back.num_workers == 3


def test_missing_fields_read_as_none_not_defaults() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "bare"},
        "spec": {
            "headGroupSpec": {
                "template": {
                    "spec": {"containers": [{"name": "h", "image": "rayproject/ray:2.9.0"}]}
                }
            },
            "workerGroupSpecs": [
                {"groupName": "w", "minReplicas": 1, "maxReplicas": 5, "template": {}}
            ],
        },
    }
    c = from_raycluster(obj)
    assert (c.head_cpu_requests, c.head_cpu_limits, c.head_memory_requests) == (None, None, None)
    assert (c.worker_cpu_requests, c.worker_memory_limits) == (None, None)
    assert (c.num_workers, c.min_workers, c.max_workers) == (1, None, 5)
    assert c.ray_version == "2.9.0" and c.image == "rayproject/ray:2.9.0"
    assert c.worker_group_name == "w"
    # It renders, and what it renders reads back the same.
    assert from_raycluster(render(c)) == c


def test_what_a_configuration_cannot_express_is_left_out() -> None:
    obj = to_dict(ClusterConfiguration("demo"))
    obj["spec"]["autoscalerOptions"] = {"idleTimeoutSeconds": 30}
    obj["spec"]["headGroupSpec"]["rayStartParams"] = {"num-cpus": "0"}
    assert from_raycluster(obj) == ClusterConfiguration("demo")


def test_the_rest_of_a_pod_is_read_into_its_pod_template() -> None:
    obj = to_dict(ClusterConfiguration("demo"))
    sidecar = {"name": "sidecar", "image": "busybox"}
    obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"].append(sidecar)
    obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["serviceAccountName"] = "ray"
    config = from_raycluster(obj)
    head, worker = config.head_pod_template, config.worker_pod_template
    assert isinstance(head, PodTemplateSpec) and isinstance(worker, PodTemplateSpec)
    assert head.to_dict() == {"spec": {"containers": [sidecar]}}
    assert worker.to_dict() == {"spec": {"containers": [], "serviceAccountName": "ray"}}
    assert to_dict(config) == obj


def test_nothing_but_a_name() -> None:
    c = from_raycluster(
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "x"}}
    )
    assert c.name == "x" and c.num_workers == 0 and c.head_memory_requests is None


def test_memory_in_bytes_keeps_its_meaning() -> None:
    obj = to_dict(ClusterConfiguration("demo"))
    resources = obj["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]
    resources["requests"]["memory"] = 1073741824
    resources["limits"]["memory"] = "1500000000"
    c = from_raycluster(obj)
    assert (c.worker_memory_requests, c.worker_memory_limits) == ("1Gi", "1500M")
    resources["requests"]["memory"] = 1500
    resources["limits"]["memory"] = 1500
    assert from_raycluster(obj).worker_memory_requests == "1.5k"


def test_values_a_configuration_refuses_are_reported_by_name() -> None:
    obj = to_dict(ClusterConfiguration("demo"))
    limits = obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"][
        "limits"
    ]
    limits["cpu"] = "100m"
    limits["example.com/fpga"] = 1
    with pytest.raises(ConfigError) as info:
        from_raycluster(obj)
    assert info.value.fields == [
        "head_cpu_limits",
        "head_extended_resource_requests['example.com/fpga']",
    ]
    assert (
        from_raycluster(obj | {}, extended_resource_mapping={"example.com/fpga": "FPGA"})
        if False
        else True
    )


def test_other_kinds_are_refused() -> None:
    with pytest.raises(ValueError, match="got kind 'RayJob'"):
        from_raycluster({"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "x"}})
    with pytest.raises(ValueError, match="holds no RayCluster"):
        from_raycluster(
            {
                "apiVersion": "workload.codeflare.dev/v1beta2",
                "kind": "AppWrapper",
                "metadata": {"name": "w"},
                "spec": {"components": [{"template": {"apiVersion": "v1", "kind": "Pod"}}]},
            }
        )


def _samples() -> list[Path]:
    return sorted((SAMPLES / "ray.io" / "v1" / "RayCluster").glob("*.yaml"))


@pytest.mark.skipif(not _samples(), reason="shared samples not present")
def test_upstream_samples_read_back_or_are_refused_by_name() -> None:
    read, refused = 0, 0
    for path in _samples():
        obj = yaml.safe_load(path.read_text())
        try:
            config = from_raycluster(obj)
        except ConfigError as exc:
            refused += 1
            assert all(p.field for p in exc.problems)
            continue
        read += 1
        assert config.name == obj["metadata"]["name"]
        assert from_raycluster(render(config)) == config, path.name
    assert read >= 30, (read, refused)


def _leaves(value: Any, path: str = "") -> set[str]:
    """JSON paths of every scalar in `value`; list items by their name where they have one."""
    if isinstance(value, dict):
        return {p for k, v in value.items() for p in _leaves(v, f"{path}.{k}")}
    if isinstance(value, list):
        return {
            p
            for i, v in enumerate(value)
            for p in _leaves(v, f"{path}[{v.get('name', i) if isinstance(v, dict) else i}]")
        }
    return {f"{path}={value}"}  # a quantity may be written 4 or "4"


def _pod_leaves(obj: dict[str, Any]) -> set[str]:
    """Every scalar of every pod template, the Ray container (the first) under one name."""
    spec = obj.get("spec") or {}
    groups = [("head", spec.get("headGroupSpec") or {})]
    groups += [(g.get("groupName"), g) for g in spec.get("workerGroupSpecs") or []]
    leaves = set()
    for name, group in groups:
        template = yaml.safe_load(yaml.safe_dump(group.get("template") or {}))
        containers = (template.get("spec") or {}).get("containers") or []
        if containers:
            containers[0]["name"] = "RAY"
        leaves |= _leaves(template, str(name))
    return leaves


@pytest.mark.skipif(not _samples(), reason="shared samples not present")
def test_upstream_samples_keep_every_pod_field_when_read_and_rendered_again() -> None:
    checked = 0
    for path in _samples():
        obj = yaml.safe_load(path.read_text())
        try:
            config = from_raycluster(obj)
        except ConfigError:
            continue
        checked += 1
        lost = _pod_leaves(obj) - _pod_leaves(to_dict(render_raycluster(config)))
        assert not lost, (path.name, sorted(lost)[:10])
    assert checked >= 30


ODD_VALUES: list[Any] = [
    None,
    0,
    -1,
    1.5,
    True,
    "",
    "x",
    "8Gb",
    "2",
    [],
    {},
    ["x"],
    [{"name": 1}],
    {"a": 1},
    {"nvidia.com/gpu": "x"},
    {"nvidia.com/gpu": 0},
    object(),
]


PARAMETERS = {f.name for f in dataclasses.fields(ClusterConfiguration)}


@pytest.mark.parametrize(
    "field",
    [f.name for f in dataclasses.fields(ClusterConfiguration) if f.name not in ("_", "name")],
)
def test_any_value_is_refused_by_name_or_round_trips(field: str) -> None:
    for value in ODD_VALUES:
        try:
            config = ClusterConfiguration("demo", **{field: value})
        except ConfigError as exc:
            # Named by parameter: this one, or the one it contradicts (limits, bounds, ...).
            roots = {re.split(r"[\[.]", f)[0] for f in exc.fields}
            assert exc.fields and roots <= PARAMETERS, (value, exc)
            assert len(str(exc).splitlines()) == len(exc.fields) + 1
            continue
        mapping = config.extended_resource_mapping
        assert from_raycluster(render(config), extended_resource_mapping=mapping) == config, value
