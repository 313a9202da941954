"""`DistributedJob`: one torchrun job definition, run wherever the cluster can run it.

Modelled on TorchX's ``dist.ddp`` component: a script (or ``-m`` module) with its arguments,
an image, ``j="NxM"`` (N nodes, M processes per node), resources per node (``cpu``, ``gpu``,
``mem_mb``), env, mounts (TorchX's ``type=volume,src=<pvc>,dst=<path>`` and
``type=bind,src=<host path>,dst=<path>``, or the same keys as a dict), service account, image
pull secret, priority class, queue and gang scheduling. `submit()` runs it as a Kubeflow
Trainer TrainJob (a torch runtime), or as a training-operator PyTorchJob on clusters that
serve ``kubeflow.org`` but not ``trainer.kubeflow.org`` (``appwrapper=True``: inside an
AppWrapper, which wraps PyTorchJobs, not TrainJobs); `submit(cluster)` runs it on a Ray cluster
(see `flarekit.job._ray_launch`).

The training operator's run-policy options map onto what the target has and are refused,
naming option and target, where it has nothing like them (`RUN_POLICY` below).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from flarekit._validation import (
    ConfigError,
    Problem,
    ValidationReport,
    check_count,
    check_dns1035_label,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_image,
    check_quantity,
)
from flarekit.job._podopts import check_pod_options
from flarekit.job._shipping import check_files, check_packages, shipped_command
from flarekit.job._trainjob import DEFAULT_RUNTIME, TrainJob, check_env

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit.client._client import Client
    from flarekit.job._pytorchjob import PyTorchJobRun
    from flarekit.job._ray_launch import RayRun
    from flarekit.ray import RayJobClient
    from flarekit_models.appwrapper.v1beta2 import AppWrapper
    from flarekit_models.core.v1 import PodSpec, Toleration, Volume, VolumeMount
    from flarekit_models.kubeflow.v1 import PyTorchJob, RunPolicy

__all__ = ["RUN_POLICY", "DistributedJob", "parse_j", "parse_mount"]


class RayDashboard(Protocol):
    """A Ray cluster whose dashboard URL can be read (a `flarekit.cluster.Cluster`)."""

    def cluster_dashboard_uri(self) -> str: ...


@runtime_checkable
class _ReachableDashboard(Protocol):
    """A Ray cluster that hands out a client of its dashboard (a `flarekit.cluster.Cluster`:
    through its Route, Ingress or HTTPRoute, else through the API server)."""

    def dashboard_client(self) -> RayJobClient: ...


Target = Literal["TrainJob", "PyTorchJob", "AppWrapper", "Ray"]
_J = re.compile(r"(?P<nodes>-?[0-9]+)x(?P<procs>-?[0-9]+)|(?P<single>-?[0-9]+)")
_CLEAN_POD_POLICIES = ("None", "All", "Running")
#: run-policy option -> its field in the training operator's ``runPolicy``
_RUN_POLICY_FIELDS = {
    "ttl_seconds_after_finished": "ttlSecondsAfterFinished",
    "active_deadline_seconds": "activeDeadlineSeconds",
    "backoff_limit": "backoffLimit",
    "clean_pod_policy": "cleanPodPolicy",
}
#: option -> {target: where it goes, or None when the target has no such thing}
RUN_POLICY: dict[str, dict[Target, str | None]] = {
    "ttl_seconds_after_finished": {
        "PyTorchJob": "runPolicy.ttlSecondsAfterFinished",
        "AppWrapper": "runPolicy.ttlSecondsAfterFinished",
        "TrainJob": None,
        "Ray": None,
    },
    "active_deadline_seconds": {
        "PyTorchJob": "runPolicy.activeDeadlineSeconds",
        "AppWrapper": "runPolicy.activeDeadlineSeconds",
        "TrainJob": "spec.activeDeadlineSeconds (Trainer v2.3 and later)",
        "Ray": None,
    },
    "backoff_limit": {
        "PyTorchJob": "runPolicy.backoffLimit",
        "AppWrapper": "runPolicy.backoffLimit",
        "TrainJob": None,
        "Ray": None,
    },
    "clean_pod_policy": {
        "PyTorchJob": "runPolicy.cleanPodPolicy",
        "AppWrapper": "runPolicy.cleanPodPolicy",
        "TrainJob": None,
        "Ray": None,
    },
}
_WHY_NOT = {
    ("TrainJob", "ttl_seconds_after_finished"): "a TrainJob has no TTL; the runtime's JobSet "
    "template sets ttlSecondsAfterFinished",
    ("TrainJob", "backoff_limit"): "a TrainJob has no backoff limit; the runtime's JobSet "
    "failurePolicy.maxRestarts sets how often it restarts",
    ("TrainJob", "clean_pod_policy"): "a TrainJob has no clean-pod policy; JobSet removes "
    "the pods of finished jobs",
}


def parse_j(report: ValidationReport, value: object) -> tuple[int, int]:
    """TorchX's ``j``: ``"NxM"`` (nodes x processes per node) or ``"M"`` (one node)."""
    expected = "'NxM' with N nodes and M processes per node, both >= 1 (e.g. '2x8'), or 'M'"
    match = _J.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        report.add("j", value, "not of the form NxM", expected)
        return 1, 1
    nodes = int(match["nodes"] or 1)
    procs = int(match["procs"] or match["single"])
    if nodes < 1 or procs < 1:
        report.add("j", value, "nodes and processes per node must be at least 1", expected)
        return 1, 1
    return nodes, procs


def parse_mount(
    report: ValidationReport, field: str, value: object
) -> tuple[Volume, VolumeMount] | None:
    """A (volume, volumeMount) pair from ``"type=volume,src=pvc,dst=/data[,readonly]"`` or
    ``{"type": "bind", "src": "/host", "dst": "/data", "readonly": True}``."""
    expected = (
        "'type=volume,src=<pvc>,dst=<path>' or 'type=bind,src=<host path>,dst=<path>' "
        "(optionally ',readonly'), or a dict with type, src, dst, readonly"
    )
    if isinstance(value, str):
        parts: dict[str, JsonValue] = {}
        for item in value.split(","):
            key, sep, text = item.strip().partition("=")
            parts[key] = text if sep else True
    elif isinstance(value, Mapping):
        parts = {str(k): v for k, v in value.items()}
    else:
        report.add(field, value, "not a mount", expected)
        return None
    kind, src, dst = parts.get("type"), parts.get("src"), parts.get("dst")
    unknown = set(parts) - {"type", "src", "dst", "readonly"}
    if kind not in ("volume", "bind") or not src or not isinstance(dst, str) or unknown:
        why = f"unknown keys {sorted(unknown)}" if unknown else "needs type volume|bind, src, dst"
        report.add(field, value, why, expected)
        return None
    if not dst.startswith("/"):
        report.add(field, value, "dst is not an absolute path", "a dst such as '/data'")
        return None
    from flarekit_models.core.v1 import (
        HostPathVolumeSource,
        PersistentVolumeClaimVolumeSource,
        Volume,
        VolumeMount,
    )

    name = "mount-" + re.sub(r"[^a-z0-9]+", "-", str(src).lower()).strip("-")[:50]
    volume = Volume(name=name)
    if kind == "volume":
        if not check_dns1123_subdomain(report, f"{field}.src", src):
            return None
        volume.persistent_volume_claim = PersistentVolumeClaimVolumeSource(claim_name=str(src))
    else:
        if not str(src).startswith("/"):
            report.add(
                field, value, "a bind src must be an absolute host path", "e.g. src=/mnt/data"
            )
            return None
        volume.host_path = HostPathVolumeSource(path=str(src))
    mount = VolumeMount(name=name, mount_path=dst)
    if parts.get("readonly") in (True, "true", "True", "1"):
        mount.read_only = True
    return volume, mount


def _check_working_dir(report: ValidationReport, value: object, script: str | None) -> str | None:
    """The local folder to ship as the job's working directory, absolute; a relative `script`
    must be in it, so that a wrong folder is found here rather than on the cluster."""
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike):
        report.add("working_dir", value, "expected a path", "a local folder, e.g. '.'")
        return None
    folder = Path(value)
    if not folder.is_dir():
        what = "a file, not a folder" if folder.exists() else "no such folder"
        report.add("working_dir", str(value), what, "a local folder, e.g. '.'")
        return None
    relative = isinstance(script, str) and script.strip() and not Path(script).is_absolute()
    if relative and not (folder / str(script)).is_file():
        report.add(
            "script", script, f"not found in working_dir {str(value)!r}",
            "a path relative to working_dir, or an absolute path on the cluster",
        )  # fmt: skip
    return str(folder.resolve())


class DistributedJob:
    """A torchrun job: `script` or `module`, `args`, `image`, `j="NxM"`, per-node `cpu`,
    `gpu` and `mem_mb`, `env`, `mounts`, `node_selector`, `tolerations` (Kubernetes JSON or
    `flarekit_models.core.v1.Toleration`), and scheduling (`service_account`,
    `image_pull_secret`, `priority_class`, `local_queue`, `gang`; `no_queue=True` creates it
    without a queue on a cluster with Kueue, with a `QueueOptOutWarning`).
    On a running Ray cluster the nodes are placed within `placement_timeout` seconds, else the
    job fails naming the resources asked for and available.
    `packages_to_install` and local `files` (a helper module next to the script) are installed
    and written in the container before torchrun starts (Kubernetes targets only; see
    `flarekit.job._shipping`). `working_dir`, a local folder, is uploaded to a running Ray
    cluster and is where the job runs there, so a relative `script` and the modules beside it
    are found on every node (Ray targets only). Run-policy options:
    `ttl_seconds_after_finished`, `active_deadline_seconds`, `backoff_limit`,
    `clean_pod_policy` ("None", "All", "Running"). All checked at construction."""

    def __init__(
        self,
        name: str,
        *,
        script: str | None = None,
        module: str | None = None,
        args: Sequence[str] = (),
        image: str | None = None,
        j: str = "1x1",
        cpu: int | float | str | None = None,
        gpu: int = 0,
        mem_mb: int | None = None,
        env: Mapping[str, str] | None = None,
        mounts: Sequence[str | Mapping[str, JsonValue]] = (),
        node_selector: Mapping[str, str] | None = None,
        tolerations: Sequence[Toleration | Mapping[str, JsonValue]] | None = None,
        namespace: str | None = None,
        service_account: str | None = None,
        image_pull_secret: str | None = None,
        priority_class: str | None = None,
        local_queue: str | None = None,
        no_queue: bool = False,
        packages_to_install: Sequence[str] | None = None,
        files: Sequence[str | os.PathLike[str]] | None = None,
        working_dir: str | os.PathLike[str] | None = None,
        gang: bool = True,
        placement_timeout: float = 300.0,
        appwrapper: bool = False,
        runtime: str = DEFAULT_RUNTIME,
        ttl_seconds_after_finished: int | None = None,
        active_deadline_seconds: int | None = None,
        backoff_limit: int | None = None,
        clean_pod_policy: str | None = None,
        client: Client | None = None,
    ) -> None:
        report = ValidationReport(f"DistributedJob {name!r}")
        check_dns1035_label(report, "name", name)
        if namespace is not None:
            check_dns1123_label(report, "namespace", namespace)
        if (script is None) == (module is None):
            report.add(
                "script",
                script,
                "give exactly one of script and module",
                "script='train.py' or module='pkg.train'",
            )
        for field, value in (("script", script), ("module", module)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                report.add(field, value, "expected a non-empty string", "e.g. 'train.py'")
        if isinstance(args, str) or not all(isinstance(a, str) for a in args):
            report.add("args", args, "expected a list of strings", "e.g. ['--epochs', '3']")
        if image is not None:
            check_image(report, "image", image, example="pytorch/pytorch:2.5.1")
        self.nodes, self.procs_per_node = parse_j(report, j)
        if cpu is not None:
            check_quantity(report, "cpu", cpu)
        check_count(report, "gpu", gpu)
        check_count(report, "mem_mb", mem_mb, allow_none=True)
        self.env = check_env(report, "env", env)
        self.volumes: list[Volume] = []
        self.volume_mounts: list[VolumeMount] = []
        for i, mount in enumerate(mounts):
            pair = parse_mount(report, f"mounts[{i}]", mount)
            if pair is not None:
                self.volumes.append(pair[0])
                self.volume_mounts.append(pair[1])
        placement = check_pod_options(report, node_selector=node_selector, tolerations=tolerations)
        self.node_selector = dict(placement.node_selector)
        self.tolerations = list(placement.tolerations)
        if service_account is not None:
            check_dns1123_subdomain(report, "service_account", service_account)
        if image_pull_secret is not None:
            check_dns1123_subdomain(report, "image_pull_secret", image_pull_secret)
        for field, seconds in (
            ("ttl_seconds_after_finished", ttl_seconds_after_finished),
            ("backoff_limit", backoff_limit),
        ):
            check_count(report, field, seconds, allow_none=True)
        deadline = check_count(
            report, "active_deadline_seconds", active_deadline_seconds, allow_none=True
        )
        if deadline == 0:
            report.add("active_deadline_seconds", 0, "must be positive", "seconds >= 1")
        if clean_pod_policy is not None and clean_pod_policy not in _CLEAN_POD_POLICIES:
            report.add(
                "clean_pod_policy",
                clean_pod_policy,
                "unknown policy",
                "one of 'None', 'All', 'Running'",
            )
        from flarekit.kueue import check_no_queue

        check_no_queue(report, no_queue, local_queue, priority_class)
        self.packages_to_install = check_packages(
            report, "packages_to_install", packages_to_install
        )
        self.files = check_files(report, "files", files)
        self.working_dir = _check_working_dir(report, working_dir, script)
        if (
            isinstance(placement_timeout, bool)
            or not isinstance(placement_timeout, int | float)
            or not 0 < placement_timeout < float("inf")
        ):
            report.add(
                "placement_timeout", placement_timeout, "expected a number of seconds > 0",
                "e.g. 300 (how long a job on Ray waits to place its nodes)",
            )  # fmt: skip
        for field, flag in (("gang", gang), ("appwrapper", appwrapper)):
            if not isinstance(flag, bool):
                report.add(field, flag, "expected True or False", "a bool")
        report.raise_if_problems()
        self.name, self.namespace, self.script, self.module = name, namespace, script, module
        self.args, self.image, self.cpu, self.gpu, self.mem_mb = list(args), image, cpu, gpu, mem_mb
        self.service_account, self.image_pull_secret = service_account, image_pull_secret
        self.priority_class, self.local_queue = priority_class, local_queue
        self.no_queue = no_queue
        self.gang, self.appwrapper, self.runtime = gang, appwrapper, runtime
        self.placement_timeout = float(placement_timeout)
        self.run_policy: dict[str, int | str] = {
            k: v
            for k, v in (
                ("ttl_seconds_after_finished", ttl_seconds_after_finished),
                ("active_deadline_seconds", active_deadline_seconds),
                ("backoff_limit", backoff_limit),
                ("clean_pod_policy", clean_pod_policy),
            )
            if v is not None
        }
        self._client = client

    # -- common pieces ------------------------------------------------------------------------

    @property
    def client(self) -> Client:
        if self._client is None:
            from flarekit.client._client import Client

            self._client = Client()
        return self._client

    def _refuse_run_policy(self, target: Target) -> None:
        problems = []
        for option, value in self.run_policy.items():
            if RUN_POLICY[option][target] is None:
                why = _WHY_NOT.get((target, option), f"a {target} job has no such setting")
                supported = [t for t, where in RUN_POLICY[option].items() if where]
                problems.append(
                    Problem(
                        option,
                        value,
                        f"not supported on {target}: {why}",
                        "leave it unset, or run on " + " / ".join(supported),
                    )
                )
        if problems:
            raise ConfigError(problems, f"DistributedJob {self.name!r} on {target}")

    def resources(self) -> dict[str, int | float | str]:
        """Per-node resources as Kubernetes names."""
        out: dict[str, int | float | str] = {}
        if self.cpu is not None:
            out["cpu"] = self.cpu
        if self.mem_mb:
            out["memory"] = f"{self.mem_mb}Mi"
        if self.gpu:
            out["nvidia.com/gpu"] = self.gpu
        return out

    def _torchrun(self) -> list[str]:
        """torchrun with the script, behind the bootstrap that installs `packages_to_install`
        and writes `files` first when there are any (see `flarekit.job._shipping`)."""
        target = ["-m", str(self.module)] if self.module else [str(self.script)]
        script = str(self.script or "")
        if not self.module and script in self.files and script.endswith(".py"):
            # A script shipped in `files` is written beside the other files, in a folder the
            # bootstrap puts on PYTHONPATH, not in the container's working directory: run it
            # from there, as a module.
            target = ["-m", script[: -len(".py")]]
        command = ["torchrun", *target, *self.args]
        return shipped_command(command, self.packages_to_install, self.files)

    # -- targets ------------------------------------------------------------------------------

    def _refuse_working_dir(self, target: Target) -> None:
        if self.working_dir is not None:
            problem = Problem(
                "working_dir", self.working_dir,
                f"not shipped to a {target}: only a running Ray cluster takes an uploaded folder",
                "None, and files=[...] for the helper files the script needs, or submit(cluster) "
                "to a Ray cluster",
            )  # fmt: skip
            raise ConfigError([problem], f"DistributedJob {self.name!r} on {target}")

    def to_trainjob(self) -> TrainJob:
        """This job as a `TrainJob` from the torch runtime (`runtime`)."""
        self._refuse_run_policy("TrainJob")
        self._refuse_working_dir("TrainJob")
        if self.appwrapper:
            raise ConfigError(
                [
                    Problem(
                        "appwrapper",
                        True,
                        "an AppWrapper cannot wrap a TrainJob (Kueue queues TrainJobs directly)",
                        "appwrapper=False, or a cluster with the training operator's PyTorchJob",
                    )
                ],
                f"DistributedJob {self.name!r}",
            )
        return TrainJob(
            self.name,
            namespace=self.namespace,
            runtime=self.runtime,
            image=self.image,
            command=self._torchrun(),
            num_nodes=self.nodes,
            num_proc_per_node=self.procs_per_node,
            resources_per_node=self.resources() or None,
            env=self.env or None,
            volumes=self.volumes or None,
            volume_mounts=self.volume_mounts or None,
            node_selector=self.node_selector or None,
            tolerations=self.tolerations or None,
            service_account=self.service_account,
            image_pull_secrets=[self.image_pull_secret] if self.image_pull_secret else None,
            local_queue=self.local_queue,
            priority_class=self.priority_class,
            no_queue=self.no_queue,
            active_deadline_seconds=self._run_policy_model().active_deadline_seconds,
            client=self._client,
        )

    def _pod(self) -> PodSpec:
        from flarekit.job._pytorchjob import CONTAINER
        from flarekit.job._resources import check_resources_per_node
        from flarekit_models.core.v1 import (
            Container,
            EnvVar,
            LocalObjectReference,
            PodSpec,
            ResourceRequirements,
        )

        container = Container(name=CONTAINER, command=self._torchrun())
        if self.image:
            container.image = self.image
        if self.env:
            container.env = [EnvVar(name=k, value=v) for k, v in self.env.items()]
        resources = check_resources_per_node(ValidationReport(), "resources", self.resources())
        if resources:
            container.resources = ResourceRequirements(requests=resources, limits=dict(resources))
        if self.volume_mounts:
            container.volume_mounts = list(self.volume_mounts)
        pod = PodSpec(containers=[container])
        if self.volumes:
            pod.volumes = list(self.volumes)
        if self.node_selector:
            pod.node_selector = dict(self.node_selector)
        if self.tolerations:
            pod.tolerations = list(self.tolerations)
        if self.service_account:
            pod.service_account_name = self.service_account
        if self.image_pull_secret:
            pod.image_pull_secrets = [LocalObjectReference(name=self.image_pull_secret)]
        return pod

    def _run_policy_model(self) -> RunPolicy:
        """The run-policy options as the training operator's ``runPolicy`` (unset ones left
        out)."""
        from flarekit_models.kubeflow.v1 import RunPolicy

        return RunPolicy.model_validate(
            {_RUN_POLICY_FIELDS[k]: v for k, v in self.run_policy.items()}
        )

    def to_pytorchjob(self, *, queue: str | None = None) -> dict[str, Any]:
        """This job as a training-operator PyTorchJob (or the AppWrapper holding it), in
        Kubernetes JSON."""
        return self._pytorchjob_model(queue=queue).to_dict()

    def _pytorchjob_model(self, *, queue: str | None) -> PyTorchJob | AppWrapper:
        from flarekit.job._pytorchjob import appwrapper_model, pytorchjob_model
        from flarekit.kueue import queue_labels
        from flarekit_models.kubeflow.v1 import SchedulingPolicy

        target: Target = "AppWrapper" if self.appwrapper else "PyTorchJob"
        self._refuse_run_policy(target)
        self._refuse_working_dir(target)
        policy = self._run_policy_model()
        if self.gang:
            policy.scheduling_policy = SchedulingPolicy(min_available=self.nodes)
        labels = queue_labels(queue if queue is not None else self.local_queue, self.priority_class)
        if labels and not self.appwrapper:
            policy.suspend = True  # Kueue resumes it once admitted
        job = pytorchjob_model(
            name=self.name,
            namespace=self.namespace,
            labels={} if self.appwrapper else labels,
            nodes=self.nodes,
            procs_per_node=self.procs_per_node,
            pod=self._pod(),
            run_policy=policy if policy.model_fields_set else None,
        )
        return appwrapper_model(job, labels) if self.appwrapper else job

    # -- submitting ---------------------------------------------------------------------------

    def target(self) -> Target:
        """Where `submit()` without a cluster runs this job, from the cluster's API groups."""
        from flarekit.client._served import NotServed, served_versions

        def served(group: str) -> bool:
            try:
                return bool(served_versions(self.client, group))
            except NotServed:
                return False

        if self.appwrapper:
            if not served("kubeflow.org"):
                raise ConfigError(
                    [
                        Problem(
                            "appwrapper",
                            True,
                            "an AppWrapper wraps the training operator's PyTorchJob, and this cluster has no kubeflow.org API",
                            "appwrapper=False (a TrainJob), or the training operator installed",
                        )
                    ],
                    f"DistributedJob {self.name!r}",
                )
            return "AppWrapper"
        if served("trainer.kubeflow.org"):
            return "TrainJob"
        if served("kubeflow.org"):
            return "PyTorchJob"
        raise ConfigError(
            [
                Problem(
                    "cluster",
                    self.client.server,
                    "neither Kubeflow Trainer (trainer.kubeflow.org) nor the training operator (kubeflow.org) is installed",
                    "a cluster with one of them, or submit(cluster) to a Ray cluster",
                )
            ],
            f"DistributedJob {self.name!r}",
        )

    def submit(
        self, cluster: RayDashboard | RayJobClient | str | None = None
    ) -> TrainJob | PyTorchJobRun | RayRun:
        """Run the job: on Kubernetes (TrainJob, else PyTorchJob, optionally in an
        AppWrapper) or, given `cluster` (a `Cluster`, a `RayJobClient` or a dashboard URL),
        on that Ray cluster. Returns its handle: a `Job` (status, wait, logs, events, stop,
        resume, delete), whichever ran it."""
        if cluster is not None:
            return self._submit_ray(cluster)
        target = self.target()
        if target == "TrainJob":
            return self.to_trainjob().submit()
        return self._submit_pytorchjob(target)

    def _submit_pytorchjob(self, target: Target) -> PyTorchJobRun:
        from flarekit.compat import prepare_write
        from flarekit.job._pytorchjob import PyTorchJobRun
        from flarekit.kueue import maybe_local_queue, opt_out_of_queue

        self._refuse_run_policy(target)
        client = self.client
        namespace = self.namespace or client.namespace
        if self.no_queue:
            opt_out_of_queue(client, namespace, f"DistributedJob {namespace}/{self.name}")
            queue = None
        else:
            queue = maybe_local_queue(client, namespace, self.local_queue)
        body = self._pytorchjob_model(queue=queue)
        if body.metadata is not None:
            body.metadata.namespace = namespace
        model = prepare_write(client, body, subject=f"DistributedJob {self.name!r}")
        client.create(model, field_validation="Strict")
        return PyTorchJobRun(client, self.name, namespace, wrapped=target == "AppWrapper")

    def ray_entrypoint(self) -> str:
        """The Ray job entrypoint (see `flarekit.job._ray_launch`)."""
        from flarekit.job._ray_launch import ray_entrypoint

        bundle: dict[str, float] = {"CPU": float(self.cpu or 1), "GPU": float(self.gpu)}
        if self.mem_mb:
            bundle["memory"] = float(self.mem_mb * 1024 * 1024)
        command, _ = ray_entrypoint(
            nodes=self.nodes, procs=self.procs_per_node, script=self.script, module=self.module,
            args=self.args, env=self.env, bundle=bundle, gang=self.gang,
            placement_timeout=self.placement_timeout,
        )  # fmt: skip
        return command

    def _submit_ray(self, cluster: RayDashboard | RayJobClient | str) -> RayRun:
        from flarekit.job._ray_launch import RayRun
        from flarekit.ray import RayJobClient

        self._refuse_run_policy("Ray")
        if self.packages_to_install or self.files:
            field = "packages_to_install" if self.packages_to_install else "files"
            problem = Problem(
                field, getattr(self, field) if field == "packages_to_install" else sorted(self.files),
                "not shipped to a running Ray cluster by DistributedJob",
                "None; working_dir=<folder> ships local files to Ray; install packages in the "
                "Ray image, or submit with flarekit.ray.RayJobClient and runtime_env={'pip': [...]}",
            )  # fmt: skip
            raise ConfigError([problem], f"DistributedJob {self.name!r} on Ray")
        k8s_only = [
            name
            for name, value in (
                ("mounts", self.volumes),
                ("node_selector", self.node_selector),
                ("tolerations", self.tolerations),
                ("service_account", self.service_account),
                ("image_pull_secret", self.image_pull_secret),
                ("local_queue", self.local_queue),
                ("priority_class", self.priority_class),
                ("appwrapper", self.appwrapper),
            )
            if value
        ]
        if k8s_only:
            raise ConfigError(
                [
                    Problem(
                        n,
                        getattr(self, n, None) or "(set)",
                        "a pod setting, which a job on a running Ray cluster cannot change",
                        "set it on the Ray cluster's configuration instead",
                    )
                    for n in k8s_only
                ],
                f"DistributedJob {self.name!r} on Ray",
            )
        if isinstance(cluster, RayJobClient):
            client = cluster
        elif isinstance(cluster, str):
            client = RayJobClient(cluster)
        elif isinstance(cluster, _ReachableDashboard):
            client = cluster.dashboard_client()  # exposed, else through the API server
        else:
            client = RayJobClient(cluster.cluster_dashboard_uri())
        runtime_env = {"working_dir": self.working_dir} if self.working_dir else None
        submission = client.submit(
            self.ray_entrypoint(), runtime_env=runtime_env, metadata={"flarekit.dev/job": self.name}
        )
        return RayRun(client, submission, self.name)

    def __repr__(self) -> str:
        what = self.script or f"-m {self.module}"
        return f"DistributedJob({self.name!r}, {what}, j='{self.nodes}x{self.procs_per_node}')"
