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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import flarekit.client
import flarekit.compat
import flarekit.kueue
import flarekit.ray
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
from flarekit.job._params import check_env, check_working_dir, parse_j, parse_mount
from flarekit.job._podopts import check_pod_options
from flarekit.job._pytorchjob import CONTAINER, PyTorchJobRun, appwrapper_model, pytorchjob_model
from flarekit.job._ray_launch import RayRun, ray_entrypoint
from flarekit.job._resources import check_resources_per_node
from flarekit.job._shipping import check_files, check_packages, shipped_command
from flarekit.job._trainjob import DEFAULT_RUNTIME, TrainJob
from flarekit_models.core import v1 as core_v1
from flarekit_models.kubeflow import v1 as kubeflow_v1

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit.client import Client
    from flarekit.ray import RayJobClient
    from flarekit_models.appwrapper.v1beta2 import AppWrapper
    from flarekit_models.core.v1 import Toleration, Volume, VolumeMount
    from flarekit_models.kubeflow.v1 import PyTorchJob

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

        flarekit.kueue.check_no_queue(report, no_queue, local_queue, priority_class)
        self.packages_to_install = check_packages(
            report, "packages_to_install", packages_to_install
        )
        self.files = check_files(report, "files", files)
        self.working_dir = check_working_dir(report, working_dir, script)
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
    def client(self) -> flarekit.client.Client:
        if self._client is None:
            self._client = flarekit.client.Client()
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

    def _pod(self) -> core_v1.PodSpec:
        container = core_v1.Container(name=CONTAINER, command=self._torchrun())
        if self.image:
            container.image = self.image
        if self.env:
            container.env = [core_v1.EnvVar(name=k, value=v) for k, v in self.env.items()]
        resources = check_resources_per_node(ValidationReport(), "resources", self.resources())
        if resources:
            container.resources = core_v1.ResourceRequirements(
                requests=resources, limits=dict(resources)
            )
        if self.volume_mounts:
            container.volume_mounts = list(self.volume_mounts)
        pod = core_v1.PodSpec(containers=[container])
        if self.volumes:
            pod.volumes = list(self.volumes)
        if self.node_selector:
            pod.node_selector = dict(self.node_selector)
        if self.tolerations:
            pod.tolerations = list(self.tolerations)
        if self.service_account:
            pod.service_account_name = self.service_account
        if self.image_pull_secret:
            pod.image_pull_secrets = [core_v1.LocalObjectReference(name=self.image_pull_secret)]
        return pod

    def _run_policy_model(self) -> kubeflow_v1.RunPolicy:
        """The run-policy options as the training operator's ``runPolicy`` (unset ones left
        out)."""
        return kubeflow_v1.RunPolicy.model_validate(
            {_RUN_POLICY_FIELDS[k]: v for k, v in self.run_policy.items()}
        )

    def to_pytorchjob(self, *, queue: str | None = None) -> dict[str, Any]:
        """This job as a training-operator PyTorchJob (or the AppWrapper holding it), in
        Kubernetes JSON."""
        return self._pytorchjob_model(queue=queue).to_dict()

    def _pytorchjob_model(self, *, queue: str | None) -> PyTorchJob | AppWrapper:
        target: Target = "AppWrapper" if self.appwrapper else "PyTorchJob"
        self._refuse_run_policy(target)
        self._refuse_working_dir(target)
        policy = self._run_policy_model()
        if self.gang:
            policy.scheduling_policy = kubeflow_v1.SchedulingPolicy(min_available=self.nodes)
        labels = flarekit.kueue.queue_labels(
            queue if queue is not None else self.local_queue, self.priority_class
        )
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

        def served(group: str) -> bool:
            try:
                return bool(flarekit.client.served_versions(self.client, group))
            except flarekit.client.NotServed:
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
        self._refuse_run_policy(target)
        client = self.client
        namespace = self.namespace or client.namespace
        if self.no_queue:
            flarekit.kueue.opt_out_of_queue(
                client, namespace, f"DistributedJob {namespace}/{self.name}"
            )
            queue = None
        else:
            queue = flarekit.kueue.maybe_local_queue(client, namespace, self.local_queue)
        body = self._pytorchjob_model(queue=queue)
        if body.metadata is not None:
            body.metadata.namespace = namespace
        model = flarekit.compat.prepare_write(client, body, subject=f"DistributedJob {self.name!r}")
        client.create(model, field_validation="Strict")
        return PyTorchJobRun(client, self.name, namespace, wrapped=target == "AppWrapper")

    def ray_entrypoint(self) -> str:
        """The Ray job entrypoint (see `flarekit.job._ray_launch`)."""
        bundle: dict[str, float] = {"CPU": float(self.cpu or 1), "GPU": float(self.gpu)}
        if self.mem_mb:
            bundle["memory"] = float(self.mem_mb * 1024 * 1024)
        command, _ = ray_entrypoint(
            nodes=self.nodes, procs=self.procs_per_node, script=self.script, module=self.module,
            args=self.args, env=self.env, bundle=bundle, gang=self.gang,
            placement_timeout=self.placement_timeout,
        )  # fmt: skip
        return command

    def _submit_ray(self, cluster: RayDashboard | flarekit.ray.RayJobClient | str) -> RayRun:
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
        if isinstance(cluster, flarekit.ray.RayJobClient):
            client = cluster
        elif isinstance(cluster, str):
            client = flarekit.ray.RayJobClient(cluster)
        elif isinstance(cluster, _ReachableDashboard):
            client = cluster.dashboard_client()  # exposed, else through the API server
        else:
            client = flarekit.ray.RayJobClient(cluster.cluster_dashboard_uri())
        runtime_env = {"working_dir": self.working_dir} if self.working_dir else None
        submission = client.submit(
            self.ray_entrypoint(), runtime_env=runtime_env, metadata={"flarekit.dev/job": self.name}
        )
        return RayRun(client, submission, self.name)

    def __repr__(self) -> str:
        what = self.script or f"-m {self.module}"
        return f"DistributedJob({self.name!r}, {what}, j='{self.nodes}x{self.procs_per_node}')"
