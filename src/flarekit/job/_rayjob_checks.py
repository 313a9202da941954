"""Every check of a :class:`~flarekit.job.RayJob`, reported together, before any request.

The rules are KubeRay's (it marks a RayJob ``ValidationFailed`` only after it was created)
and Kueue's (its webhook refuses a queued RayJob on create), checked here so that a mistake
costs nothing and names the parameter the user wrote:

* the name is a DNS-1035 label of at most 47 characters (KubeRay appends 6 characters to
  name the job's RayCluster, whose name may have at most 53);
* exactly one of ``cluster_name`` (an existing RayCluster) and ``cluster_config`` (a cluster
  created for the job and owned by it);
* ``ttl_seconds_after_finished`` only with ``shutdown_after_finish`` (KubeRay), which only
  means something for a job-owned cluster; ``active_deadline_seconds`` > 0;
* a queued job (``local_queue``) must own its cluster, shut it down when it finishes, not
  autoscale, and have at most 7 worker groups, none named ``head`` (Kueue);
* the entrypoint's CPUs and GPUs are numbers >= 0; ``entrypoint_resources`` are custom Ray
  resources (Ray refuses ``CPU`` and ``GPU`` there); no KubeRay release has a field for the
  entrypoint's memory, so ``entrypoint_memory`` is refused rather than dropped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import flarekit.kueue
from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit._sizes import check_annotations
from flarekit._validation import (
    ValidationReport,
    check_count,
    check_dns1035_label,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_label_value,
    check_labels,
)
from flarekit.cluster import ClusterConfiguration
from flarekit_models.core import v1 as core_v1

if TYPE_CHECKING:
    from flarekit.job._rayjob_parameters import RayJobParameters

__all__ = [
    "MAX_NAME_LENGTH",
    "MAX_QUEUED_WORKER_GROUPS",
    "SUBMISSION_MODES",
    "check_queued",
    "validate",
]

#: KubeRay's limit: the job's RayCluster is named ``<job>-<5 characters>`` (at most 53).
MAX_NAME_LENGTH = 47
#: Kueue's limit: 8 pod sets, one of which is the head.
MAX_QUEUED_WORKER_GROUPS = 7
#: How KubeRay submits the Ray job: a Kubernetes Job running ``ray job submit`` (the
#: default), or HTTP requests from the operator itself (no submitter pod, so no logs here).
SUBMISSION_MODES = ("K8sJobMode", "HTTPMode")
#: Ray's own resources, which ``entrypoint_resources`` may not name.
_BUILTIN = {"CPU": "entrypoint_num_cpus", "GPU": "entrypoint_num_gpus", "memory": ""}


def validate(job: RayJobParameters) -> ValidationReport:
    """All problems of ``job``'s parameters, in parameter order (no request is made)."""
    report = ValidationReport(f"RayJob {job.name!r}")
    _check_name(report, job.name)
    if job.namespace is not None:
        check_dns1123_label(report, "namespace", job.namespace)
    if not isinstance(job.entrypoint, str) or not job.entrypoint.strip():
        report.add(
            "entrypoint",
            job.entrypoint,
            "must be a non-empty command",
            "the shell command that starts the job, such as 'python train.py --epochs 3'",
        )
    _check_cluster(report, job)
    _check_runtime_env(report, job.runtime_env)
    _check_lifecycle(report, job)
    _check_kueue_names(report, job)
    _check_entrypoint_resources(report, job)
    _check_submitter(report, job)
    check_labels(report, "labels", job.labels)
    check_annotations(report, "annotations", job.annotations)
    if job.local_queue is not None:
        check_queued(report, job, "local_queue")
    return report


def _check_name(report: ValidationReport, name: object) -> None:
    ok = check_dns1035_label(report, "name", name) and isinstance(name, str)
    if ok and isinstance(name, str) and len(name) > MAX_NAME_LENGTH:
        report.add(
            "name",
            name,
            f"too long ({len(name)} characters) for KubeRay, which names the job's "
            "RayCluster '<name>-<5 characters>'",
            f"a name of at most {MAX_NAME_LENGTH} characters",
        )


def _check_cluster(report: ValidationReport, job: RayJobParameters) -> None:
    config = job.cluster_config
    if (job.cluster_name is None) == (config is None):
        given = "both" if config is not None else "neither"
        report.add(
            "cluster_name",
            job.cluster_name,
            f"{given} cluster_name and cluster_config given",
            "exactly one: cluster_name='<existing RayCluster>' to run on a running cluster, or "
            "cluster_config=ClusterConfiguration(...) for a cluster made for the job",
        )
    if job.cluster_name is not None:
        check_dns1035_label(report, "cluster_name", job.cluster_name)
    if config is None:
        return
    if not isinstance(config, ClusterConfiguration):
        report.add(
            "cluster_config",
            config,
            f"expected a ClusterConfiguration, got {type(config).__name__}",
            "flarekit.cluster.ClusterConfiguration(...)",
        )
        return
    for problem in config.validate():
        field = f"cluster_config.{problem.field}"
        report.add(field, problem.value, problem.message, problem.expected)
    if config.appwrapper is not False:
        report.add(
            "cluster_config.appwrapper",
            config.appwrapper,
            "a RayJob's own cluster is created by KubeRay, not wrapped in an AppWrapper",
            "False",
        )
    for field in ("labels", "annotations"):
        if getattr(config, field):
            report.add(
                f"cluster_config.{field}",
                getattr(config, field),
                "a RayJob's cluster gets no metadata of its own from the RayJob",
                f"{{}}; put them on the RayJob ({field}=...)",
            )
    if config.namespace is not None and job.namespace not in (None, config.namespace):
        report.add(
            "cluster_config.namespace",
            config.namespace,
            f"differs from the job's namespace {job.namespace!r}",
            f"None or {job.namespace!r} (the cluster is created in the job's namespace)",
        )
    for field in ("local_queue", "priority_class"):
        own, inner = getattr(job, field), getattr(config, field)
        if own is not None and inner is not None and own != inner:
            report.add(
                f"cluster_config.{field}",
                inner,
                f"contradicts the job's {field}={own!r} (the job is what Kueue queues)",
                f"None, or the same value as {field}",
            )


def _check_runtime_env(report: ValidationReport, env: object) -> None:
    expected = "a dict such as {'pip': ['torch'], 'env_vars': {'EPOCHS': '3'}}, or None"
    if env is None:
        return
    if not isinstance(env, Mapping):
        report.add("runtime_env", env, f"expected a dict, got {type(env).__name__}", expected)
        return
    bad = [k for k in env if not isinstance(k, str)]
    if bad:
        report.add("runtime_env", env, f"keys must be strings, got {bad[0]!r}", expected)
        return
    try:
        json.dumps(env, allow_nan=False)
    except (TypeError, ValueError) as exc:
        report.add("runtime_env", env, f"not JSON-serialisable ({exc})", expected)


def _check_bool(report: ValidationReport, field: str, value: object, *, allow_none: bool) -> None:
    if isinstance(value, bool) or (value is None and allow_none):
        return
    report.add(field, value, f"expected True or False, got {type(value).__name__}", "a bool")


def _check_lifecycle(report: ValidationReport, job: RayJobParameters) -> None:
    _check_bool(report, "shutdown_after_finish", job.shutdown_after_finish, allow_none=True)
    if job.cluster_name is not None and job.shutdown_after_finish is True:
        report.add(
            "shutdown_after_finish",
            True,
            "KubeRay shuts down only a cluster the job created, not an existing one",
            "None or False with cluster_name (or use cluster_config)",
        )
    ttl = check_count(
        report, "ttl_seconds_after_finished", job.ttl_seconds_after_finished, allow_none=True
    )
    if ttl and not job.shuts_down_cluster:
        report.add(
            "ttl_seconds_after_finished",
            ttl,
            "KubeRay keeps a finished job's cluster only when it is to be shut down",
            "None or 0, or shutdown_after_finish=True with cluster_config",
        )
    deadline = job.active_deadline_seconds
    if deadline is not None and (
        isinstance(deadline, bool) or not isinstance(deadline, int) or deadline <= 0
    ):
        report.add(
            "active_deadline_seconds",
            deadline,
            "must be a whole number of seconds > 0",
            "None (no deadline), or seconds such as 3600",
        )


def _check_kueue_names(report: ValidationReport, job: RayJobParameters) -> None:
    config = job.cluster_config
    flarekit.kueue.check_no_queue(
        report,
        job.no_queue,
        job.requested_queue,
        job.priority_class or (config.priority_class if config is not None else None),
    )
    for field in ("local_queue", "priority_class"):
        value = getattr(job, field)
        if value is None:
            continue
        if check_dns1123_subdomain(report, field, value):
            check_label_value(report, field, value)
        if job.cluster_name is not None:
            report.add(
                field,
                value,
                "Kueue queues a RayJob only with a cluster of its own (it queues the existing "
                "cluster itself, not jobs on it)",
                "None with cluster_name, or cluster_config=... to queue the job",
            )

    flarekit.kueue.check_queue_labels(report, job.labels, job.local_queue, job.priority_class)
    labels = job.labels if isinstance(job.labels, Mapping) else {}
    for label in (QUEUE_LABEL, PRIORITY_LABEL):
        if job.cluster_name is not None and label in labels:
            report.add(
                f"labels[{label!r}]",
                labels[label],
                "Kueue queues a RayJob only with a cluster of its own (it queues the existing "
                "cluster itself, not jobs on it)",
                f"no {label} label with cluster_name, or cluster_config=... to queue the job",
            )


def check_queued(report: ValidationReport, job: RayJobParameters, queue_field: str) -> None:
    """Kueue's webhook rules for a queued RayJob; ``queue_field`` names where the queue came
    from (``local_queue``, or the default LocalQueue found at submit time)."""
    if job.cluster_name is not None:
        return  # already reported by the name checks
    if job.shutdown_after_finish is False:
        report.add(
            "shutdown_after_finish",
            False,
            f"Kueue refuses a queued job ({queue_field}) that keeps its cluster after finishing",
            "None or True",
        )
    config = job.cluster_config
    if not isinstance(config, ClusterConfiguration):
        return
    if config.enable_autoscaling is True:
        report.add(
            "cluster_config.enable_autoscaling",
            True,
            f"Kueue refuses autoscaling for a queued job ({queue_field}): the quota it "
            "reserves is fixed",
            "False, or no queue",
        )
    groups = config.all_worker_groups()
    if len(groups) > MAX_QUEUED_WORKER_GROUPS:
        report.add(
            "cluster_config.worker_groups",
            len(groups),
            f"Kueue accepts at most {MAX_QUEUED_WORKER_GROUPS} worker groups in a queued job",
            f"at most {MAX_QUEUED_WORKER_GROUPS - 1} extra worker groups",
        )
    for group in groups:
        if group.name == "head":
            report.add(
                "cluster_config.worker_groups",
                group.name,
                "Kueue refuses a worker group named 'head' in a queued job",
                "another group name",
            )


def _check_number(report: ValidationReport, field: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        report.add(field, value, f"expected a number, got {value!r}", "a number >= 0, or None")
    elif value < 0:
        report.add(field, value, "must not be negative", "a number >= 0, or None")


def _check_entrypoint_resources(report: ValidationReport, job: RayJobParameters) -> None:
    _check_number(report, "entrypoint_num_cpus", job.entrypoint_num_cpus)
    _check_number(report, "entrypoint_num_gpus", job.entrypoint_num_gpus)
    if job.entrypoint_memory is not None:
        report.add(
            "entrypoint_memory",
            job.entrypoint_memory,
            "no KubeRay release has a RayJob field for the entrypoint's memory, so it "
            "would be dropped",
            "None; reserve memory with the cluster's resources, or submit to a running "
            "cluster with flarekit.ray.RayJobClient(...).submit(entrypoint_memory=...)",
        )
    resources = job.entrypoint_resources
    if resources is None:
        return
    if not isinstance(resources, Mapping):
        report.add(
            "entrypoint_resources",
            resources,
            f"expected a dict, got {type(resources).__name__}",
            "custom Ray resources and amounts, such as {'TPU': 4}",
        )
        return
    for key, amount in resources.items():
        where = f"entrypoint_resources[{key!r}]"
        if not isinstance(key, str) or not key:
            report.add(where, amount, "resource names must be non-empty strings", "a name")
        elif key in _BUILTIN:
            instead = _BUILTIN[key] or "the cluster's memory settings (Ray has no entrypoint one)"
            report.add(where, amount, f"Ray refuses {key!r} among custom resources", instead)
        else:
            _check_number(report, where, amount)


def _check_submitter(report: ValidationReport, job: RayJobParameters) -> None:
    mode = job.submission_mode
    if mode is not None and mode not in SUBMISSION_MODES:
        report.add(
            "submission_mode",
            mode,
            "not a submission mode flarekit supports",
            " or ".join(repr(m) for m in SUBMISSION_MODES) + ", or None (K8sJobMode)",
        )
    has_pod = mode in (None, "K8sJobMode")
    template = job.submitter_pod_template
    if template is not None:
        if not has_pod:
            report.add("submitter_pod_template", "...", f"{mode} runs no submitter pod", "None")
        _check_pod_template(report, template)
    check_count(report, "submitter_backoff_limit", job.submitter_backoff_limit, allow_none=True)
    if job.submitter_backoff_limit is not None and not has_pod:
        report.add(
            "submitter_backoff_limit",
            job.submitter_backoff_limit,
            f"{mode} runs no submitter pod to retry",
            "None",
        )


def _check_pod_template(report: ValidationReport, template: object) -> None:
    from pydantic import ValidationError

    if isinstance(template, core_v1.PodTemplateSpec):
        return
    if not isinstance(template, Mapping):
        report.add(
            "submitter_pod_template",
            template,
            f"expected a dict or PodTemplateSpec, got {type(template).__name__}",
            "a pod template in Kubernetes JSON, {'spec': {'containers': [...]}}",
        )
        return
    try:
        core_v1.PodTemplateSpec.model_validate(template)
    except ValidationError as exc:
        for error in exc.errors():
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            report.add(
                f"submitter_pod_template{path}",
                error["input"],
                error["msg"],
                "a valid Kubernetes pod template",
            )
