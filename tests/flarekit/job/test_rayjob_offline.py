"""RayJob without a cluster: what it renders, what it refuses (naming the parameter), and
reading parameters back from an object."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import yaml
from rayjob_support import small_config

from flarekit.cluster import ClusterConfiguration, ConfigError, WorkerGroup, render_raycluster
from flarekit.job import RayJob
from flarekit.job._rayjob_render import read_params
from flarekit_models.ray.v1 import RayJob as RayJobModel

QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"


def owned(**kwargs: Any) -> RayJob:
    return RayJob("train", "python train.py", cluster_config=small_config(), **kwargs)


def on_cluster(**kwargs: Any) -> RayJob:
    return RayJob("train", "python train.py", cluster_name="shared", **kwargs)


def problems(**kwargs: Any) -> list[str]:
    """The fields a RayJob with these arguments is refused for."""
    base: dict[str, Any] = {"name": "train", "entrypoint": "python train.py"}
    base.update(kwargs)
    if "cluster_name" not in base and "cluster_config" not in base:
        base["cluster_config"] = small_config()
    with pytest.raises(ConfigError) as caught:
        RayJob(**base)
    return caught.value.fields


# -- rendering ------------------------------------------------------------------------------


def test_job_owned_cluster_is_the_rendered_raycluster_spec() -> None:
    config = small_config(worker_extended_resource_requests={"nvidia.com/gpu": 1})
    job = RayJob("train", "python train.py", cluster_config=config, namespace="team-a")
    data = job.to_dict()
    assert data["apiVersion"] == "ray.io/v1" and data["kind"] == "RayJob"
    assert data["metadata"] == {"name": "train", "namespace": "team-a"}
    spec = data["spec"]
    assert spec["rayClusterSpec"] == render_raycluster(config).to_dict()["spec"]
    assert spec["shutdownAfterJobFinishes"] is True
    assert "clusterSelector" not in spec and "suspend" not in spec
    RayJobModel.model_validate(data)


def test_existing_cluster_is_selected_and_kept() -> None:
    spec = on_cluster().to_dict()["spec"]
    assert spec["clusterSelector"] == {"ray.io/cluster": "shared"}
    assert spec["shutdownAfterJobFinishes"] is False
    assert "rayClusterSpec" not in spec


def test_queued_job_is_labelled_and_created_suspended() -> None:
    data = owned(local_queue="team-q", priority_class="high").to_dict()
    assert data["metadata"]["labels"] == {QUEUE: "team-q", PRIORITY: "high"}
    assert data["spec"]["suspend"] is True


def test_queue_and_priority_from_the_cluster_configuration_go_on_the_job() -> None:
    config = small_config(local_queue="team-q", priority_class="low")
    data = RayJob("train", "python train.py", cluster_config=config).to_dict()
    assert data["metadata"]["labels"] == {QUEUE: "team-q", PRIORITY: "low"}
    assert "labels" not in data["spec"]["rayClusterSpec"]


def test_options_map_to_kuberay_fields() -> None:
    job = owned(
        runtime_env={"pip": ["numpy==2.1"], "env_vars": {"EPOCHS": "3"}},
        ttl_seconds_after_finished=60,
        active_deadline_seconds=3600,
        entrypoint_num_cpus=0.5,
        entrypoint_num_gpus=1,
        entrypoint_resources={"TPU": 4},
        submitter_pod_template={"spec": {"containers": [{"name": "s", "image": "ray:2"}]}},
        submitter_backoff_limit=2,
        labels={"team": "a"},
        annotations={"note": "first try"},
    )
    data = job.to_dict()
    spec = data["spec"]
    assert yaml.safe_load(spec["runtimeEnvYAML"]) == job.runtime_env
    assert spec["ttlSecondsAfterFinished"] == 60
    assert spec["activeDeadlineSeconds"] == 3600
    assert (spec["entrypointNumCpus"], spec["entrypointNumGpus"]) == (0.5, 1)
    assert json.loads(spec["entrypointResources"]) == {"TPU": 4}
    assert spec["submitterPodTemplate"]["spec"]["containers"][0]["image"] == "ray:2"
    assert spec["submitterConfig"] == {"backoffLimit": 2}
    assert data["metadata"]["labels"] == {"team": "a"}
    assert data["metadata"]["annotations"] == {"note": "first try"}


def test_yaml_is_the_dict() -> None:
    job = owned(runtime_env={"env_vars": {"A": "1"}})
    assert yaml.safe_load(job.to_yaml()) == job.to_dict()


def test_renders_without_credentials(tmp_path: Any) -> None:
    code = (
        "from flarekit.job import RayJob\n"
        "from flarekit.cluster import ClusterConfiguration\n"
        "job = RayJob('x', 'python a.py', cluster_config=ClusterConfiguration('c'))\n"
        "print(job.to_yaml().splitlines()[0])\n"
    )
    env = {"KUBECONFIG": str(tmp_path / "missing"), "HOME": str(tmp_path), "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "apiVersion: ray.io/v1"


def test_parameters_read_back_from_the_object() -> None:
    job = owned(
        namespace="team-a",
        runtime_env={"pip": ["x"]},
        ttl_seconds_after_finished=5,
        local_queue="q",
        priority_class="p",
        entrypoint_num_cpus=1,
        entrypoint_resources={"TPU": 2},
        submitter_backoff_limit=1,
        labels={"team": "a"},
    )
    params = read_params(job.to_model())
    again = RayJob(**params)
    assert again.to_dict() == job.to_dict()
    assert again.cluster_config is not None
    assert again.cluster_config.num_workers == 1


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"name": "Train_1"}, "name"),
        ({"name": "a" * 48}, "name"),
        ({"entrypoint": "  "}, "entrypoint"),
        ({"namespace": "Team A"}, "namespace"),
        ({"cluster_name": "shared", "cluster_config": small_config()}, "cluster_name"),
        ({"cluster_config": None}, "cluster_name"),
        ({"runtime_env": "pip: [x]"}, "runtime_env"),
        ({"runtime_env": {"env_vars": {"A": float("nan")}}}, "runtime_env"),
        ({"ttl_seconds_after_finished": -1}, "ttl_seconds_after_finished"),
        (
            {"shutdown_after_finish": False, "ttl_seconds_after_finished": 30},
            "ttl_seconds_after_finished",
        ),
        ({"active_deadline_seconds": 0}, "active_deadline_seconds"),
        ({"active_deadline_seconds": "1h"}, "active_deadline_seconds"),
        ({"shutdown_after_finish": "yes"}, "shutdown_after_finish"),
        ({"local_queue": "Team_Q"}, "local_queue"),
        ({"priority_class": "x" * 64}, "priority_class"),
        ({"entrypoint_num_cpus": -1}, "entrypoint_num_cpus"),
        ({"entrypoint_num_gpus": "two"}, "entrypoint_num_gpus"),
        ({"entrypoint_memory": 2**30}, "entrypoint_memory"),
        ({"entrypoint_resources": {"GPU": 1}}, "entrypoint_resources['GPU']"),
        ({"entrypoint_resources": {"TPU": -4}}, "entrypoint_resources['TPU']"),
        ({"submission_mode": "SidecarMode"}, "submission_mode"),
        (
            {"submission_mode": "HTTPMode", "submitter_backoff_limit": 1},
            "submitter_backoff_limit",
        ),
        ({"submitter_pod_template": {"spec": {"containers": "x"}}}, "submitter_pod_template"),
        ({"labels": {QUEUE: "q"}, "local_queue": "other"}, f"labels[{QUEUE!r}]"),
        ({"cluster_config": small_config(appwrapper=True)}, "cluster_config.appwrapper"),
        ({"cluster_config": small_config(labels={"a": "b"})}, "cluster_config.labels"),
        (
            {"namespace": "a", "cluster_config": small_config(namespace="b")},
            "cluster_config.namespace",
        ),
        (
            {"local_queue": "a", "cluster_config": small_config(local_queue="b")},
            "cluster_config.local_queue",
        ),
    ],
)
def test_refused_naming_the_parameter(kwargs: dict[str, Any], field: str) -> None:
    fields = problems(**kwargs)
    assert any(f == field or f.startswith(field + "[") or f.startswith(field + ".") for f in fields)


def test_template_problems_name_the_path_inside_it() -> None:
    fields = problems(submitter_pod_template={"spec": {"containers": [{"image": 3}]}})
    assert any(f.startswith("submitter_pod_template.spec.containers[0]") for f in fields), fields


def test_a_changed_cluster_configuration_is_checked_again() -> None:
    config = small_config()
    config.num_workers = -3
    assert "cluster_config.num_workers" in problems(cluster_config=config)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cluster_name": "shared", "local_queue": "q"}, "local_queue"),
        ({"cluster_name": "shared", "priority_class": "p"}, "priority_class"),
        ({"cluster_name": "shared", "shutdown_after_finish": True}, "shutdown_after_finish"),
        ({"local_queue": "q", "shutdown_after_finish": False}, "shutdown_after_finish"),
        (
            {"local_queue": "q", "cluster_config": small_config(enable_autoscaling=True)},
            "cluster_config.enable_autoscaling",
        ),
        (
            {
                "local_queue": "q",
                "cluster_config": small_config(
                    worker_groups=[WorkerGroup(f"g{i}") for i in range(7)]
                ),
            },
            "cluster_config.worker_groups",
        ),
        (
            {"local_queue": "q", "cluster_config": small_config(worker_group_name="head")},
            "cluster_config.worker_groups",
        ),
    ],
)
def test_kuberay_and_kueue_rules(kwargs: dict[str, Any], field: str) -> None:
    assert field in problems(**kwargs)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        RayJob(
            "Bad Name",
            "",
            cluster_config=ClusterConfiguration("c"),
            cluster_name="shared",
            entrypoint_num_cpus=-1,
            entrypoint_memory=1,
        )
    assert caught.value.fields == [
        "name",
        "entrypoint",
        "cluster_name",
        "entrypoint_num_cpus",
        "entrypoint_memory",
    ]
    text = str(caught.value)
    assert "5 problems in RayJob 'Bad Name'" in text
    assert "entrypoint_memory=1" in text and "RayJobClient" in text


def test_changed_parameters_are_checked_again_before_rendering() -> None:
    job = owned()
    job.entrypoint_num_gpus = -1
    with pytest.raises(ConfigError) as caught:
        job.to_yaml()
    assert caught.value.fields == ["entrypoint_num_gpus"]


# -- status ---------------------------------------------------------------------------------


def status_from(status: dict[str, Any] | None, **spec: Any) -> Any:
    from flarekit.job._rayjob_status import status_of

    body: dict[str, Any] = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "j", "namespace": "ns", "labels": {QUEUE: "lq"}},
        "spec": {"entrypoint": "x", **spec},
    }
    if status is not None:
        body["status"] = status
    return status_of(RayJobModel.model_validate(body), QUEUE)


@pytest.mark.parametrize(
    ("status", "finished", "succeeded", "failed"),
    [
        (None, False, False, False),
        ({}, False, False, False),
        ({"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}, False, False, False),
        ({"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"}, True, True, False),
        # KubeRay v1.1 ends a failed Ray job as Complete; v1.2 and later say Failed.
        ({"jobDeploymentStatus": "Complete", "jobStatus": "FAILED"}, True, False, True),
        ({"jobDeploymentStatus": "Complete", "jobStatus": "STOPPED"}, True, False, True),
        ({"jobDeploymentStatus": "Failed", "reason": "DeadlineExceeded"}, True, False, True),
        ({"jobDeploymentStatus": "ValidationFailed", "message": "bad"}, True, False, True),
        ({"jobDeploymentStatus": "Suspended"}, False, False, False),
    ],
)
def test_status_tolerates_missing_fields(
    status: dict[str, Any] | None, finished: bool, succeeded: bool, failed: bool
) -> None:
    found = status_from(status)
    assert (found.finished, found.succeeded, found.failed) == (finished, succeeded, failed)
    assert (found.failure_reason is not None) == failed
    assert found.local_queue == "lq" and found.name == "j"
    assert found.as_table().startswith("RayJob ns/j")


def test_failure_reason_prefers_the_message() -> None:
    failed = status_from({"jobDeploymentStatus": "Failed", "reason": "AppFailed", "message": "m"})
    assert failed.failure_reason == "m"
    bare = status_from({"jobDeploymentStatus": "Failed", "reason": "DeadlineExceeded"})
    assert bare.failure_reason == "reason DeadlineExceeded, jobDeploymentStatus Failed"


def test_status_times_and_suspension() -> None:
    found = status_from(
        {"jobDeploymentStatus": "Complete", "startTime": "2026-01-02T03:04:05Z"}, suspend=True
    )
    assert found.start_time is not None and found.start_time.year == 2026
    assert found.end_time is None and found.suspended
