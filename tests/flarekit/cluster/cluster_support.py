"""Configurations and CRD schemas shared by the cluster facade tests."""

from __future__ import annotations

from typing import Any

from flarekit.cluster import ClusterConfiguration, WorkerGroup


def full_config(**overrides: Any) -> ClusterConfiguration:
    kwargs: dict[str, Any] = {
        "namespace": "team-a",
        "image": "quay.io/modh/ray:2.47.1-py311-cu121",
        "head_cpu_requests": "500m",
        "head_cpu_limits": 1,
        "head_memory_requests": "2Gi",
        "head_memory_limits": "4Gi",
        "head_extended_resource_requests": {"nvidia.com/gpu": 1},
        "head_tolerations": [{"key": "head", "operator": "Exists", "effect": "NoSchedule"}],
        "head_node_selector": {"pool": "cpu"},
        "num_workers": 2,
        "min_workers": 1,
        "max_workers": 4,
        "worker_extended_resource_requests": {"google.com/tpu": 4, "nvidia.com/gpu": 2},
        "worker_tolerations": [{"key": "gpu", "operator": "Exists"}],
        "worker_groups": [
            WorkerGroup(
                "accel",
                num_workers=1,
                memory_requests="16Gi",
                memory_limits="16Gi",
                extended_resource_requests={"habana.ai/gaudi": 8},
                node_selector={"pool": "gaudi"},
            )
        ],
        "enable_autoscaling": True,
        "autoscaler_idle_timeout_seconds": 120,
        "envs": {"HF_HOME": "/data/hf"},
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        "volume_mounts": [{"name": "data", "mountPath": "/data"}],
        "image_pull_secrets": ["quay-pull"],
        "labels": {"team": "a"},
        "annotations": {"note": "nightly training"},
        "local_queue": "team-a-queue",
        "priority_class": "high",
        "enable_gcs_ft": True,
        "redis_address": "redis.team-a.svc:6379",
        "redis_password_secret": {"name": "redis", "key": "password"},
        "external_storage_namespace": "demo-ft",
    }
    kwargs.update(overrides)
    return ClusterConfiguration("demo", **kwargs)


def crd_schema(family: str, tag: str, plural: str, version: str) -> dict[str, Any]:
    from flarekit_models._crds import crds_for

    for crd in crds_for({family: tag}):
        if crd["spec"]["names"]["plural"] == plural:
            for v in crd["spec"]["versions"]:
                if v["name"] == version:
                    schema: dict[str, Any] = v["schema"]["openAPIV3Schema"]
                    return schema
    raise AssertionError(f"no {plural}/{version} in {family}@{tag}")
