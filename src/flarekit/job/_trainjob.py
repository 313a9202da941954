"""`TrainJob`: a Kubeflow Trainer job from a runtime, an image or a Python function.

Users say what to run (an image and command, or a function), on how many nodes with which
resources, and where it may be scheduled; flarekit checks all of it before any request
(``num_nodes=-2`` and memory ``"lots"`` never reach the cluster), renders the TrainJob for the
Trainer release the cluster runs (see `flarekit.job._podfield`), puts it in a Kueue queue when
there is one, and then follows it: `status`, `wait`, `logs`, `stop` / `suspend`, `resume`,
`delete`. Everything renders offline too (`to_dict`, `to_yaml`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import flarekit.client
import flarekit.kueue
from flarekit._objects import labels_of
from flarekit._products import JOBSET_LABEL, QUEUE_LABEL, REPLICATED_JOB_LABEL
from flarekit._sizes import check_annotations
from flarekit._tables import HtmlStatus
from flarekit._validation import (
    ConfigError,
    Problem,
    ValidationReport,
    check_count,
    check_dns1035_label,
    check_dns1123_label,
    check_image,
    check_labels,
)
from flarekit._yaml import to_yaml
from flarekit.job._job import KubeJob, NoPodYet
from flarekit.job._jobstate import JobStatus
from flarekit.job._packaging import PackagingError, function_command, function_script
from flarekit.job._params import check_env, check_strings
from flarekit.job._podfield import create_trainjob
from flarekit.job._podopts import PodField, PodOptions, check_pod_options, render
from flarekit.job._resources import check_resources_per_node
from flarekit.job._runtimes import Runtime, RuntimeKind, RuntimeNotFound, get_runtime
from flarekit.job._shipping import check_files, check_packages, shipped_command
from flarekit.job._trainjob_read import read_params, trainjob_status
from flarekit.job._workload import set_workload_active
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit._json import JsonValue
    from flarekit.client import Client, PodInfo
    from flarekit_models import KubeResource
    from flarekit_models.core.v1 import Affinity, Toleration, Volume, VolumeMount

__all__ = ["DEFAULT_RUNTIME", "TrainJob"]

DEFAULT_RUNTIME = "torch-distributed"
#: Parameters `TrainJob.from_existing` takes as read, under the attribute of the same name.
_READ_AS_IS = (
    "runtime", "runtime_kind", "image", "command", "args", "num_nodes", "num_proc_per_node",
    "resources_per_node", "env", "labels", "annotations", "local_queue", "priority_class",
    "active_deadline_seconds",
)  # fmt: skip


class TrainJob(KubeJob[JobStatus], HtmlStatus):
    """A Kubeflow Trainer TrainJob, described in a few parameters and checked at once.

    Run either `image` + `command` / `args`, or `func` (a Python function, sent as source
    and called with `func_args`; see `flarekit.job._packaging`). `packages_to_install` (pip
    requirements) are installed and local `files` (a helper module, a config) written into
    the container before it runs, both importable (see `flarekit.job._shipping`), from
    `runtime` (a
    ClusterTrainingRuntime or TrainingRuntime; `runtime_kind` picks one when both exist).
    `resources_per_node` is e.g. ``{"cpu": 4, "memory": "16Gi", "gpu": 1}``. The pod options
    (`volumes`, `volume_mounts`, `node_selector`, `tolerations`, `affinity`,
    `service_account`, `image_pull_secrets`) land in whichever field the cluster's Trainer
    has. `local_queue` (else the namespace's default LocalQueue, when Kueue is installed) and
    `priority_class` queue the job with Kueue; `no_queue=True` creates it without a queue on a
    cluster with Kueue (with a `QueueOptOutWarning`: Kueue may still take or hold it).
    `active_deadline_seconds` needs Trainer v2.3.

    Raises `ConfigError` listing every problem; nothing is sent until `submit()`.
    """

    kind = "TrainJob"

    def __init__(
        self,
        name: str,
        *,
        namespace: str | None = None,
        runtime: str = DEFAULT_RUNTIME,
        runtime_kind: RuntimeKind | None = None,
        image: str | None = None,
        command: Sequence[str] | None = None,
        args: Sequence[str] | None = None,
        func: Callable[..., object] | None = None,
        func_args: Mapping[str, object] | None = None,
        packages_to_install: Sequence[str] | None = None,
        files: Sequence[str | os.PathLike[str]] | None = None,
        num_nodes: int | None = None,
        num_proc_per_node: int | None = None,
        resources_per_node: Mapping[str, int | float | str] | None = None,
        env: Mapping[str, str] | None = None,
        volumes: Sequence[Volume | Mapping[str, JsonValue]] | None = None,
        volume_mounts: Sequence[VolumeMount | Mapping[str, JsonValue]] | None = None,
        node_selector: Mapping[str, str] | None = None,
        tolerations: Sequence[Toleration | Mapping[str, JsonValue]] | None = None,
        affinity: Affinity | Mapping[str, JsonValue] | None = None,
        service_account: str | None = None,
        image_pull_secrets: Sequence[str] | None = None,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        local_queue: str | None = None,
        priority_class: str | None = None,
        no_queue: bool = False,
        suspend: bool = False,
        active_deadline_seconds: int | None = None,
        client: Client | None = None,
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.runtime = runtime
        self.runtime_kind = runtime_kind
        self.image = image
        self.func = func
        self.func_args = dict(func_args or {})
        self.num_nodes = num_nodes
        self.num_proc_per_node = num_proc_per_node
        self.local_queue = local_queue
        self.priority_class = priority_class
        self.no_queue = no_queue
        self.suspend_on_create = suspend
        self.active_deadline_seconds = active_deadline_seconds
        self._client = client
        self._runtime: Runtime | None = None
        self._runtime_looked_up = False
        self._queue: str | None = local_queue
        self._submitted_namespace: str | None = None
        report = ValidationReport(f"TrainJob {name!r}")
        check_dns1035_label(report, "name", name)
        if namespace is not None:
            check_dns1123_label(report, "namespace", namespace)
        if not isinstance(runtime, str) or not runtime:
            report.add("runtime", runtime, "expected a runtime name", "e.g. 'torch-distributed'")
        if runtime_kind not in (None, "ClusterTrainingRuntime", "TrainingRuntime"):
            report.add(
                "runtime_kind",
                runtime_kind,
                "unknown kind",
                "'ClusterTrainingRuntime' or 'TrainingRuntime'",
            )
        if image is not None:
            check_image(report, "image", image, example="pytorch/pytorch:2.5.1")
        self.command = check_strings(report, "command", command)
        self.args = check_strings(report, "args", args)
        self._check_func(report)
        self.packages_to_install = check_packages(
            report, "packages_to_install", packages_to_install
        )
        self.files = check_files(report, "files", files)
        if (self.packages_to_install or self.files) and func is None and not self.command:
            report.add(
                "packages_to_install" if self.packages_to_install else "files",
                packages_to_install or [str(f) for f in files or ()],
                "needs a command to run after installing (the image's entrypoint is unknown)",
                "func=<function>, or command=[...]",
            )
        for field, value in (("num_nodes", num_nodes), ("num_proc_per_node", num_proc_per_node)):
            count = check_count(report, field, value, allow_none=True)
            if count == 0:
                report.add(field, value, "must be at least 1", "a whole number >= 1 or None")
        if active_deadline_seconds is not None:
            seconds = check_count(report, "active_deadline_seconds", active_deadline_seconds)
            if seconds == 0:
                report.add("active_deadline_seconds", 0, "must be positive", "seconds >= 1")
        self.resources_per_node = check_resources_per_node(
            report, "resources_per_node", resources_per_node
        )
        self.env = check_env(report, "env", env)
        self.pod: PodOptions = check_pod_options(
            report,
            volumes=volumes,
            volume_mounts=volume_mounts,
            node_selector=node_selector,
            tolerations=tolerations,
            affinity=affinity,
            service_account=service_account,
            image_pull_secrets=image_pull_secrets,
        )
        self.labels = dict(labels or {})
        self.annotations = dict(annotations or {})
        if labels is not None:
            check_labels(report, "labels", labels)
        if annotations is not None:
            check_annotations(report, "annotations", annotations)
        self._check_queue(report)
        if not isinstance(suspend, bool):
            report.add("suspend", suspend, "expected True or False", "a bool")
        report.raise_if_problems()

    # -- validation ---------------------------------------------------------------------------

    def _check_func(self, report: ValidationReport) -> None:
        if self.func is None:
            if self.func_args:
                report.add("func_args", self.func_args, "given without func", "func=<function>")
            return
        if self.command or self.args:
            report.add(
                "func", getattr(self.func, "__name__", self.func), "given with command/args",
                "either func (with func_args) or command/args, not both",
            )  # fmt: skip
            return
        try:
            function_script(self.func, self.func_args)
        except PackagingError as exc:
            report.add(
                "func", getattr(self.func, "__name__", self.func), str(exc), "a plain function"
            )

    def _check_queue(self, report: ValidationReport) -> None:
        flarekit.kueue.check_no_queue(report, self.no_queue, self.local_queue, self.priority_class)
        try:
            flarekit.kueue.queue_labels(self.local_queue, self.priority_class)
        except ConfigError as exc:
            report.problems.extend(exc.problems)
        flarekit.kueue.check_queue_labels(
            report, self.labels, self.local_queue, self.priority_class
        )

    # -- rendering ----------------------------------------------------------------------------

    def _targets(self, runtime: Runtime | None) -> dict[str, list[str]]:
        if runtime is None:
            return {"node": ["node"]}
        targets = {runtime.trainer_job: [runtime.trainer_container]}
        if "launcher" in runtime.replicated_jobs and runtime.trainer_job != "launcher":
            containers = runtime.containers.get("launcher") or ("launcher",)
            targets["launcher"] = [containers[0]]
        return targets

    def _policy(self, runtime: Runtime | None) -> str:
        if runtime is not None:
            return runtime.policy
        return next((p for p in ("torch", "mpi") if p in self.runtime), "plain")

    def _trainer(self, runtime: Runtime | None) -> trainer_v1alpha1.Trainer | None:
        trainer = trainer_v1alpha1.Trainer()
        if self.image:
            trainer.image = self.image
        if self.func is not None:
            command = function_command(self.func, self.func_args, policy=self._policy(runtime))
            trainer.command = shipped_command(command, self.packages_to_install, self.files)
        else:
            if self.command:
                trainer.command = shipped_command(
                    self.command, self.packages_to_install, self.files
                )
            if self.args:
                trainer.args = list(self.args)
        if self.num_nodes is not None:
            trainer.num_nodes = self.num_nodes
        if self.num_proc_per_node is not None:
            trainer.num_proc_per_node = self.num_proc_per_node
        if self.resources_per_node:
            trainer.resources_per_node = core_v1.ResourceRequirements(
                requests=dict(self.resources_per_node), limits=dict(self.resources_per_node)
            )
        if self.env:
            trainer.env = [core_v1.EnvVar(name=k, value=v) for k, v in self.env.items()]
        return trainer if trainer.model_fields_set else None

    def to_model(
        self,
        *,
        pod_field: PodField | None = "runtimePatches",
        runtime: Runtime | None = None,
        queue: str | None = None,
    ) -> trainer_v1alpha1.TrainJob:
        """The TrainJob as a typed model. Offline, pod options go in `pod_field` (the
        newest Trainer's by default) and the queue is `local_queue` as given; `submit()`
        renders with what the cluster has."""
        runtime = runtime or self._runtime
        queue = queue if queue is not None else self._queue
        priority = flarekit.kueue.chosen_priority(self.labels, self.priority_class)
        labels = {**self.labels, **flarekit.kueue.queue_labels(queue, priority)}
        metadata = meta_v1.ObjectMeta(name=self.name)
        namespace = self._submitted_namespace or self.namespace
        if namespace:
            metadata.namespace = namespace
        if labels:
            metadata.labels = labels
        if self.annotations:
            metadata.annotations = dict(self.annotations)
        ref = trainer_v1alpha1.RuntimeRef(api_group="trainer.kubeflow.org", name=self.runtime)
        kind = runtime.kind if runtime is not None else self.runtime_kind
        if kind:
            ref.kind = kind
        spec = trainer_v1alpha1.TrainJobSpec(runtime_ref=ref)
        trainer = self._trainer(runtime)
        if trainer is not None:
            spec.trainer = trainer
        if self.suspend_on_create or queue:
            spec.suspend = True  # Kueue unsuspends it once admitted
        if self.active_deadline_seconds is not None:
            spec.active_deadline_seconds = self.active_deadline_seconds
        if self.pod and pod_field is not None:
            # The three pod fields belong to different Trainer releases: the model of this
            # one keeps those it does not declare as unknown fields.
            patches = render(self.pod, pod_field, self._targets(runtime))
            spec = trainer_v1alpha1.TrainJobSpec.model_validate(
                {**spec.to_dict(), pod_field: patches}
            )
        return trainer_v1alpha1.TrainJob(metadata=metadata, spec=spec)

    def to_dict(
        self,
        *,
        pod_field: PodField | None = "runtimePatches",
        runtime: Runtime | None = None,
        queue: str | None = None,
    ) -> dict[str, Any]:
        """The TrainJob as Kubernetes JSON (see `to_model`)."""
        return self.to_model(pod_field=pod_field, runtime=runtime, queue=queue).to_dict()

    def to_yaml(self, *, pod_field: PodField | None = "runtimePatches") -> str:
        """`to_dict()` as block YAML with sorted keys."""
        return to_yaml(self.to_model(pod_field=pod_field))

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def client(self) -> flarekit.client.Client:
        if self._client is None:
            self._client = flarekit.client.Client()
        return self._client

    @property
    def resolved_namespace(self) -> str:
        return self._submitted_namespace or self.namespace or self.client.namespace

    def submit(self) -> TrainJob:
        """Create the TrainJob: read its runtime, resolve the queue, then one create (or one
        per pod-customisation field the cluster turns out not to have)."""
        client = self.client
        namespace = self.namespace or client.namespace
        self._runtime = get_runtime(
            client, self.runtime, namespace=namespace, kind=self.runtime_kind
        )
        if self.func is not None and self._runtime.policy not in ("torch", "mpi", "plain"):
            problem = Problem(
                "func",
                getattr(self.func, "__name__", self.func),
                f"runtime {self.runtime!r} has the {self._runtime.policy} policy, which has no "
                "launcher for a packaged function",
                "image and command, or a torch, mpi or plain runtime",
            )
            raise ConfigError([problem], f"TrainJob {self.name!r}")
        if self.no_queue:
            flarekit.kueue.opt_out_of_queue(client, namespace, f"TrainJob {namespace}/{self.name}")
            self._queue = None
        else:
            asked = flarekit.kueue.chosen_queue(
                self.labels, self.local_queue
            )  # a queue label is a choice too
            self._queue = flarekit.kueue.maybe_local_queue(client, namespace, asked)
        self._submitted_namespace = namespace
        runtime, queue = self._runtime, self._queue
        create_trainjob(
            client, lambda f: self.to_model(pod_field=f, runtime=runtime, queue=queue), self.pod
        )
        return self

    def _model(self) -> type[KubeResource]:
        return trainer_v1alpha1.TrainJob

    def _connection(self) -> tuple[Client, str]:
        return self.client, self.resolved_namespace

    def _status_of(self, obj: KubeResource) -> JobStatus:
        if not isinstance(obj, trainer_v1alpha1.TrainJob):
            raise TypeError(f"expected a TrainJob, got {type(obj).__name__}")
        return trainjob_status(obj)

    def suspend(self) -> None:
        """Hold the job (`spec.suspend: true`): its pods are removed until `resume()`. Kueue
        owns `spec.suspend` of a queued job; `stop()` stops those."""
        self._set_suspend(True)

    def resume(self) -> JobStatus:
        """Let a suspended or stopped job run again: a queued job's Workload is activated
        again (and waits for Kueue's admission), another job is unsuspended. Returns the
        status after the request."""
        obj = self._fetch()
        if _queue_of(obj) is None:
            self._set_suspend(False)
        else:
            self._set_workload_active(obj, active=True)
        return self.status()

    def stop(self) -> JobStatus:
        """Stop the job and keep it; a finished job is left as it is. Returns the status
        after the request; `resume()` starts it again.

        A job queued by Kueue is stopped by deactivating its Workload (``spec.active:
        false``), which makes Kueue evict it and suspend the job: Kueue owns ``spec.suspend``
        of the jobs it queues and would start a merely suspended one again (see
        `flarekit.job._workload`). A job outside any queue is suspended (`suspend()`).
        Raises `LookupError` while Kueue has not made a queued job's Workload yet.
        """
        obj = self._fetch()
        current = self._status_of(obj)
        if current.finished:
            return current
        if _queue_of(obj) is None:
            self._set_suspend(True)
        else:
            self._set_workload_active(obj, active=False)
        return self.status()

    def _set_workload_active(self, obj: KubeResource, *, active: bool) -> None:
        subject = f"TrainJob {self.resolved_namespace}/{self.name}"
        set_workload_active(self.client, obj, active=active, subject=subject)

    def _set_suspend(self, value: bool) -> None:
        self.client.patch(
            self._model(),
            self.name,
            {"spec": {"suspend": value}},
            namespace=self.resolved_namespace,
        )

    def pods(self) -> list[PodInfo]:
        """The job's pods (trainer and initializers), by role and index."""
        return flarekit.client.list_pods(
            self.client, self.resolved_namespace, {JOBSET_LABEL: self.name}
        )

    @overload
    def logs(
        self,
        *,
        follow: Literal[False] = False,
        tail: int | None = None,
        since: float | None = None,
        node: int = 0,
        all_nodes: bool = False,
    ) -> str: ...

    @overload
    def logs(
        self,
        *,
        follow: Literal[True],
        tail: int | None = None,
        since: float | None = None,
        node: int = 0,
        all_nodes: bool = False,
    ) -> Iterator[str]: ...

    def logs(
        self,
        *,
        follow: bool = False,
        tail: int | None = None,
        since: float | None = None,
        node: int = 0,
        all_nodes: bool = False,
    ) -> str | Iterator[str]:
        """The trainer log of node `node` (0: the first): all of it, the last `tail` lines or
        those of the last `since` seconds; `follow=True` yields lines as they are written
        until the pod ends. `all_nodes=True` reads every pod of the job instead, each line
        prefixed ``[<rank>/<pod>]`` (followed: merged as lines arrive, until the job ends)."""
        if all_nodes:
            return self._all_nodes_log(follow=follow, tail=tail, since=since)
        return self._read_log(
            lambda: self._trainer_pod(node), follow=follow, tail=tail, since=since
        )  # fmt: skip

    def _log_pod(self) -> tuple[str, str | None]:
        return self._trainer_pod(0)

    def _pod_selectors(self, obj: KubeResource) -> list[Mapping[str, str]]:
        return [{JOBSET_LABEL: self.name}]

    def _made_for(self, obj: KubeResource) -> list[tuple[str, str]]:
        return [("JobSet", self.name)]  # Trainer names the JobSet after the TrainJob

    def _trainer_pod(self, node: int) -> tuple[str, str | None]:
        runtime = self._runtime or self._look_up_runtime()
        job = runtime.trainer_job if runtime else "node"
        container = runtime.trainer_container if runtime else "node"
        selector = f"{JOBSET_LABEL}={self.name},{REPLICATED_JOB_LABEL}={job}"
        pods = list(flarekit.client.list_pods(self.client, self.resolved_namespace, selector))
        chosen = _pod_of_node(pods, node)
        if chosen is None:
            raise NoPodYet(
                f"TrainJob {self.resolved_namespace}/{self.name} has no pod for node {node} "
                f"yet ({len(pods)} pods of job {job!r}); its state: {self.status().state.value}"
            )
        return chosen, container

    def _look_up_runtime(self) -> Runtime | None:
        """The runtime the job names, read once for a job this object did not submit (an
        attached one), so that logs come from the runtime's trainer job and container. None
        when it cannot be read (deleted since, or not readable for this user): Trainer's
        defaults (`node`, `node`) apply then."""
        if self._runtime_looked_up or not self.runtime:
            return None
        self._runtime_looked_up = True
        with contextlib.suppress(
            RuntimeNotFound, flarekit.client.Forbidden, flarekit.client.NotFound
        ):
            self._runtime = get_runtime(
                self.client, self.runtime, namespace=self.resolved_namespace,
                kind=self.runtime_kind,
            )  # fmt: skip
        return self._runtime

    # -- attaching -----------------------------------------------------------------------------

    @classmethod
    def from_existing(
        cls, name: str, namespace: str | None = None, client: flarekit.client.Client | None = None
    ) -> TrainJob:
        """Attach to a TrainJob on the cluster, submitted by flarekit or by anyone else.

        One GET reads what maps to parameters (runtime, image, command, nodes, resources,
        env, queue, ...; see `flarekit.job._trainjob_read`), tolerating any field missing;
        it is not validated, since the job exists. Pod customisation is not read back.
        ``status()``, ``wait()``, ``logs()`` (from the trainer of the runtime the job names,
        read when first needed), ``stop()``, ``suspend()``/``resume()`` and ``delete()``
        work on it; a missing job raises `NotFound`.
        """
        client = client if client is not None else flarekit.client.Client()
        obj = client.get(trainer_v1alpha1.TrainJob, name, namespace=namespace)
        params = read_params(obj)
        job = cls.__new__(cls)
        job.__dict__.update(
            {key: params[key] for key in _READ_AS_IS},
            func=None,
            func_args={},
            packages_to_install=[],
            files={},
            no_queue=False,
            suspend_on_create=params["suspend"],
            pod=PodOptions(),
            _client=client,
            _runtime=None,
            _runtime_looked_up=False,
            _queue=params["local_queue"],
        )
        meta = obj.metadata
        job.name = (meta.name if meta is not None else None) or name
        job.namespace = (meta.namespace if meta is not None else None) or namespace
        job.namespace = job.namespace or client.namespace
        job._submitted_namespace = job.namespace
        return job

    # -- display ------------------------------------------------------------------------------

    def _status_title(self) -> str:
        return f"TrainJob {self.namespace or ''}/{self.name}".replace(" /", " ")

    def _status_rows(self) -> Sequence[tuple[str, object]]:
        return [
            ("runtime", self.runtime),
            ("nodes", self.num_nodes),
            (
                "resources per node",
                ", ".join(f"{k}={v}" for k, v in self.resources_per_node.items()),
            ),
            ("queue", self._queue),
        ]

    def __repr__(self) -> str:
        return (
            f"TrainJob(name={self.name!r}, namespace={self.namespace!r}, runtime={self.runtime!r})"
        )


def _queue_of(obj: KubeResource) -> str | None:
    """The LocalQueue a TrainJob (as read) is queued in, from its Kueue label."""
    return labels_of(obj).get(QUEUE_LABEL) or None


def _pod_of_node(pods: Sequence[PodInfo], node: int) -> str | None:
    """The pod of node `node`: the one with that completion index, else the `node`-th by name."""
    indexed = [p for p in pods if p.index == node]
    if indexed:
        return indexed[0].name
    ordered = sorted(pods, key=lambda p: p.name)
    return ordered[node].name if 0 <= node < len(ordered) else None
