"""`RayJob`: run one command on a Ray cluster through KubeRay's RayJob, and follow it.

A data scientist gives a name, a command and either a running cluster (``cluster_name``) or
a :class:`~flarekit.cluster.ClusterConfiguration` for a cluster made for the job, which
KubeRay deletes when the job ends. Everything is checked before the first request
(:class:`~flarekit.cluster.ConfigError` lists every problem, naming the parameter), the job
renders to YAML without a cluster (:meth:`RayJob.to_yaml`), and a queued job's LocalQueue
or the RayCluster ``cluster_name`` names must exist before the job is created.

Stopping: KubeRay stops a RayJob by suspension (``spec.suspend: true``): it stops the Ray
job, deletes the job's cluster and submitter, and keeps the RayJob, which
:meth:`RayJob.resume` starts over. KubeRay refuses suspension for a job on an existing
cluster and for one that keeps its cluster after finishing; for those, :meth:`RayJob.stop`
says so and :meth:`RayJob.delete` is the way to stop them (KubeRay's finalizer stops the Ray
job on the cluster). For a job queued by Kueue, Kueue owns ``spec.suspend`` (it would start
an admitted job again), so :meth:`RayJob.stop` deactivates the job's Workload instead
(``spec.active: false``), which makes Kueue evict and suspend it.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import flarekit.client
import flarekit.compat
import flarekit.kueue
import flarekit_models
from flarekit._products import QUEUE_LABEL, SUBMITTER_JOB_LABEL
from flarekit._sizes import check_object_size
from flarekit._validation import ConfigError, Problem, ValidationReport
from flarekit._write_plan import WritePlan, execute
from flarekit._yaml import to_yaml
from flarekit.job._job import JobError, KubeJob, NoPodYet
from flarekit.job._rayjob_checks import check_queued, validate
from flarekit.job._rayjob_parameters import RayJobParameters
from flarekit.job._rayjob_render import CLUSTER_LABEL, rayjob_model, read_params
from flarekit.job._rayjob_status import RayJobStatus, status_of
from flarekit.job._workload import set_workload_active
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit.client import ApiError, Client
    from flarekit_models import KubeResource
    from flarekit_models.ray.v1 import RayJob as RayJobModel

__all__ = ["RayJob", "RayJobError"]

_UNKNOWN_FIELD = re.compile(r'unknown field "([^"]+)"')
#: Fields only some KubeRay releases have, and the parameter that sets each (longest first).
_PARAMETERS = (
    ("spec.rayClusterSpec.gcsFaultToleranceOptions", "cluster_config.enable_gcs_ft"),
    ("spec.rayClusterSpec", "cluster_config"),
    ("spec.submitterConfig", "submitter_backoff_limit"),
    ("spec.submitterPodTemplate", "submitter_pod_template"),
)


class RayJobError(JobError):
    """The RayJob cannot do what was asked in its current state (the message says why and
    what to do instead)."""


class NoSubmitterPod(RayJobError, NoPodYet):
    """KubeRay has not started the job's submitter pod yet (its cluster is not ready, or the
    job is queued)."""


@dataclass(eq=False)
class RayJob(RayJobParameters, KubeJob[RayJobStatus]):
    """A command run on a Ray cluster by KubeRay (a ``ray.io/v1`` RayJob).

    Parameters (all but ``name`` and ``entrypoint`` keyword-only):

    * ``name``: the RayJob's name (a DNS-1035 label, at most 47 characters);
      ``entrypoint``: the command, such as ``"python train.py --epochs 3"``.
    * ``namespace``: where it goes; ``None``: ``cluster_config.namespace``, else the
      client's default namespace.
    * ``cluster_name``: run on this existing RayCluster; or ``cluster_config``: a
      :class:`~flarekit.cluster.ClusterConfiguration` for a cluster KubeRay creates for the
      job (its ``name`` is not used: KubeRay names it ``<job>-<suffix>``).
    * ``runtime_env``: Ray's runtime environment as a dict (``{"pip": [...],
      "env_vars": {...}, "working_dir": ...}``); paths are paths in the submitter pod.
    * ``shutdown_after_finish``: delete the job's cluster when the job ends (``None``: yes
      with ``cluster_config``, no with ``cluster_name``); ``ttl_seconds_after_finished``:
      keep it that long first; ``active_deadline_seconds``: fail the job after that long.
    * ``local_queue``: the Kueue LocalQueue; ``None`` uses the namespace's default
      LocalQueue when Kueue is installed (a missing queue is an error, never dropped);
      ``priority_class``: the Kueue WorkloadPriorityClass. Only with ``cluster_config``.
      ``no_queue=True`` creates the job without a queue on a cluster with Kueue, warning
      (`QueueOptOutWarning`) that Kueue may still take or hold it.
    * ``entrypoint_num_cpus`` / ``entrypoint_num_gpus`` / ``entrypoint_resources``: what Ray
      reserves for the entrypoint; ``entrypoint_memory`` is refused (no KubeRay release has
      a field for it).
    * ``submission_mode``: ``"K8sJobMode"`` (default: a submitter pod runs ``ray job
      submit``) or ``"HTTPMode"`` (the operator submits; no submitter logs);
      ``submitter_pod_template`` (a pod template in Kubernetes JSON or a
      ``PodTemplateSpec``) and ``submitter_backoff_limit`` (KubeRay v1.4 and later)
      customise the submitter.
    * ``labels`` / ``annotations``: on the RayJob.
    * ``client``: the :class:`~flarekit.Client` to use; ``None``: ``Client()`` on first use.

    Constructing one validates it; nothing is sent until :meth:`submit`.
    """

    def __post_init__(self) -> None:
        self.validate().raise_if_problems()

    # -- offline ------------------------------------------------------------------------------

    def validate(self) -> ValidationReport:
        """Every problem of the parameters (empty when valid); sends nothing."""
        return validate(self)

    def _namespace_offline(self) -> str | None:
        if self.namespace is not None:
            return self.namespace
        return self.cluster_config.namespace if self.cluster_config is not None else None

    def to_model(self) -> RayJobModel:
        """The RayJob object as a typed model, as :meth:`submit` would create it with the
        queue asked for (without a cluster, the namespace's default queue is not known)."""
        self.validate().raise_if_problems()
        made = rayjob_model(self, namespace=self._namespace_offline(), queue=self.requested_queue)
        parameters = ((f.name, getattr(self, f.name)) for f in dataclasses.fields(self))
        check_object_size(made, f"RayJob {self.name!r}", parameters)
        return made

    def to_dict(self) -> dict[str, Any]:
        """The RayJob in Kubernetes JSON form (see :meth:`to_model`)."""
        return self.to_model().to_dict()

    def to_yaml(self) -> str:
        """The RayJob as block-style YAML with sorted keys, for review or ``kubectl apply``."""
        return to_yaml(self.to_model())

    # -- connecting ---------------------------------------------------------------------------

    def _connect(self) -> tuple[flarekit.client.Client, str]:
        if self.client is None:
            self.client = flarekit.client.Client()
        return self.client, self._namespace_offline() or self.client.namespace

    @staticmethod
    def _kind() -> type[ray_v1.RayJob]:
        return ray_v1.RayJob

    def _get(self, client: Client, namespace: str) -> RayJobModel:
        return client.get(self._kind(), self.name, namespace=namespace)

    #: KubeRay's finalizer stops the Ray job, and the job's cluster goes with the RayJob.
    _propagation: ClassVar[Literal["Foreground", "Background"] | None] = None

    def _connection(self) -> tuple[Client, str]:
        return self._connect()

    def _model(self) -> type[KubeResource]:
        return self._kind()

    def _status_of(self, obj: KubeResource) -> RayJobStatus:
        model = self._kind()
        if not isinstance(obj, model):
            raise TypeError(f"expected a RayJob, got {type(obj).__name__}")
        return status_of(obj, QUEUE_LABEL)

    def _stuck(self, status: RayJobStatus) -> str | None:
        stopped = status.suspended and status.local_queue is None
        if stopped and status.deployment_status == "Suspended":
            return "the job is stopped (suspended); resume() runs it again"
        return None

    # -- lifecycle ----------------------------------------------------------------------------

    def submit(self) -> RayJob:
        """Create the RayJob: validate everything, resolve the queue (a missing LocalQueue is
        an error before anything is created), then create it; returns ``self``.

        A queued job is created suspended; Kueue starts it once admitted. A
        ``cluster_name`` must name a RayCluster of the namespace (read first; where reading
        RayClusters is forbidden, a warning says so and the job is submitted). A field the
        cluster's KubeRay release does not have is refused naming the parameter and the
        releases that have it (the request uses strict field validation, so nothing is
        created). An existing RayJob of the same name is not touched (``AlreadyExists``).
        """
        self.validate().raise_if_problems()
        client, namespace = self._connect()
        if self.cluster_name is not None:
            self._check_cluster_exists(client, namespace, self.cluster_name)
        queue = self._resolve_queue(client, namespace)
        model = flarekit.compat.prepare_write(
            client,
            rayjob_model(self, namespace=namespace, queue=queue),
            parameters=_PARAMETERS,
            subject=f"RayJob {self.name!r}",
        )
        try:
            execute(client, WritePlan(f"RayJob {self.name!r}", [model], create=True))
        except flarekit.client.NotFound:
            _raise_if_not_served(client)
            raise
        except flarekit.client.ApiError as exc:
            unknown = _unknown_fields(self.name, exc)
            if unknown is not None:
                raise unknown from exc
            raise
        return self

    def _check_cluster_exists(self, client: Client, namespace: str, cluster: str) -> None:
        """Refuse a ``cluster_name`` that names no RayCluster of the namespace, listing those
        that exist: KubeRay would accept the RayJob and leave it waiting for the cluster.

        One GET; a user who may not read RayClusters (403) may still be allowed to submit,
        so a refused read warns and lets the submission go ahead.
        """
        try:
            client.get(ray_v1.RayCluster, cluster, namespace=namespace)
            return
        except flarekit.client.Forbidden:
            warnings.warn(
                f"RayJob {self.name!r}: cannot check that cluster_name={cluster!r} names a "
                f"RayCluster in namespace {namespace!r} (reading RayClusters is forbidden); "
                "submitting anyway",
                stacklevel=3,
            )
            return
        except flarekit.client.NotFound:
            pass
        try:
            found = client.list(ray_v1.RayCluster, namespace=namespace)
            names = sorted(str(c.metadata.name) for c in found if c.metadata is not None)
            known = ", ".join(names) or "none"
        except flarekit.client.Forbidden:
            known = "unknown (listing RayClusters is forbidden)"
        except flarekit.client.NotFound:
            _raise_if_not_served(client)
            known = "none"
        problem = Problem(
            "cluster_name",
            cluster,
            f"no RayCluster of that name in namespace {namespace!r}",
            f"one of the RayClusters there: {known}; or cluster_config for a cluster made "
            "for the job",
        )
        raise ConfigError([problem], f"RayJob {self.name!r}")

    def _resolve_queue(self, client: Client, namespace: str) -> str | None:
        if self.cluster_name is not None:
            return None
        if self.no_queue:
            flarekit.kueue.opt_out_of_queue(client, namespace, f"RayJob {namespace}/{self.name}")
            return None

        asked = self.requested_queue
        try:
            queue = flarekit.kueue.maybe_local_queue(client, namespace, asked)
        except flarekit.client.NotServed as exc:
            problem = Problem("local_queue", asked, str(exc), "None, or install Kueue first")
            raise ConfigError([problem], f"RayJob {self.name!r}") from None
        priority = flarekit.kueue.chosen_priority(self.labels, self.priority_class) or (
            self.cluster_config.priority_class if self.cluster_config is not None else None
        )
        report = ValidationReport(f"RayJob {self.name!r}")
        if queue is None and priority is not None:
            report.add(
                "priority_class",
                priority,
                "Kueue is not installed on this cluster, so no priority class applies",
                "None",
            )
        if queue is not None and asked is None:
            check_queued(report, self, f"the default LocalQueue {queue!r}")
        report.raise_if_problems()
        return queue

    def _log_pod(self) -> tuple[str, str | None]:
        """The submitter pod, whose ``ray job submit`` streams the Ray job's logs (the newest
        one when retries made several).

        Raises :class:`RayJobError` while there is no submitter pod yet, and for
        ``HTTPMode`` jobs, which have none (read those through
        :class:`flarekit.ray.RayJobClient` with the dashboard and job id of :meth:`status`).
        """
        client, namespace = self._connect()
        obj = self._get(client, namespace)
        spec = obj.spec
        if spec is not None and spec.submission_mode == "HTTPMode":
            raise RayJobError(
                f"RayJob {namespace}/{self.name} is submitted in HTTPMode, which runs no "
                "submitter pod; read its logs with flarekit.ray.RayJobClient(<dashboard>)"
                ".logs(<job_id>), using status().dashboard_url and status().job_id"
            )
        pods = flarekit.client.list_pods(client, namespace, {SUBMITTER_JOB_LABEL: self.name})
        if not pods:
            state = status_of(obj, QUEUE_LABEL).summary
            raise NoSubmitterPod(
                f"RayJob {namespace}/{self.name} has no submitter pod yet ({state}); KubeRay "
                "starts it once the job's cluster is ready"
            )
        # Retries (submitter_backoff_limit) leave older pods behind; the newest one counts.
        return max(pods, key=lambda p: p.created).name, None

    def _pod_selectors(self, obj: KubeResource) -> list[Mapping[str, str]]:
        """The submitter's pods, and those of the RayCluster the job runs on."""
        selectors: list[Mapping[str, str]] = [{SUBMITTER_JOB_LABEL: self.name}]
        cluster = self._cluster_of(obj)
        if cluster:
            selectors.append({CLUSTER_LABEL: cluster})
        return selectors

    def _made_for(self, obj: KubeResource) -> list[tuple[str, str]]:
        """The submitter Job (named after the RayJob) and the RayCluster the job runs on."""
        cluster = self._cluster_of(obj)
        return [("Job", self.name), *([("RayCluster", cluster)] if cluster else [])]

    def _cluster_of(self, obj: KubeResource) -> str | None:
        status = obj.status if isinstance(obj, ray_v1.RayJob) else None
        if status is not None and status.ray_cluster_name:
            return status.ray_cluster_name
        return self.cluster_name

    def stop(self) -> RayJobStatus:
        """Stop the job and keep the RayJob (see the module notes); a finished job is left as
        it is. Returns the status after the request."""
        client, namespace = self._connect()
        obj = self._get(client, namespace)
        current = status_of(obj, QUEUE_LABEL)
        if current.finished:
            return current
        self._check_suspendable(obj, namespace)
        if current.local_queue is not None:
            self._set_workload_active(client, obj, namespace, active=False)
        else:
            client.patch(self._kind(), self.name, {"spec": {"suspend": True}}, namespace=namespace)
        return self.status()

    def resume(self) -> RayJobStatus:
        """Start a stopped job again (KubeRay runs it from the beginning on a new cluster)."""
        client, namespace = self._connect()
        obj = self._get(client, namespace)
        current = status_of(obj, QUEUE_LABEL)
        if current.local_queue is not None:
            self._set_workload_active(client, obj, namespace, active=True)
        elif current.suspended:
            client.patch(self._kind(), self.name, {"spec": {"suspend": False}}, namespace=namespace)
        return self.status()

    def _check_suspendable(self, obj: RayJobModel, namespace: str) -> None:
        spec = obj.spec
        where = f"RayJob {namespace}/{self.name}"
        if spec is not None and spec.cluster_selector:
            raise RayJobError(
                f"{where} runs on the existing RayCluster "
                f"{spec.cluster_selector.get('ray.io/cluster')!r}, and KubeRay cannot suspend "
                "such a job; delete() stops the Ray job and removes the RayJob"
            )
        if spec is None or not spec.shutdown_after_job_finishes:
            raise RayJobError(
                f"{where} keeps its cluster after finishing, and KubeRay suspends only jobs "
                "that shut theirs down; delete() stops it and removes the RayJob"
            )

    def _set_workload_active(
        self, client: Client, obj: RayJobModel, namespace: str, *, active: bool
    ) -> None:
        subject = f"RayJob {namespace}/{self.name}"
        set_workload_active(client, obj, active=active, subject=subject, error=RayJobError)

    # -- attaching ----------------------------------------------------------------------------

    @classmethod
    def from_existing(
        cls,
        name: str,
        namespace: str | None = None,
        *,
        client: flarekit.client.Client | None = None,
    ) -> RayJob:
        """Attach to a RayJob on the cluster, made by flarekit or by anyone else.

        The parameters are read from the object where they map (a ``rayClusterSpec`` that a
        ``ClusterConfiguration`` cannot express reads as ``cluster_config=None``); they are
        not validated, since the job exists. ``status()``, ``wait()``, ``logs()``,
        ``stop()`` and ``delete()`` work on it whatever it holds.
        """
        client = client if client is not None else flarekit.client.Client()
        obj = client.get(ray_v1.RayJob, name, namespace=namespace)
        params = read_params(obj)
        job = cls.__new__(cls)
        for f in fields(cls):
            if f.name in params:
                value = params[f.name]
            elif f.default_factory is not MISSING:
                value = f.default_factory()
            else:
                value = f.default
            setattr(job, f.name, value)
        job.namespace = job.namespace or namespace
        job.client = client
        return job


def _raise_if_not_served(client: Client) -> None:
    """A 404 on create means the namespace or the RayJob resource is missing; when it is the
    latter, raise `NotServed` naming KubeRay instead of a bare 404."""
    flarekit.client.served_versions(client, "ray.io")


def _unknown_fields(name: str, exc: ApiError) -> ConfigError | None:
    """A strict-validation refusal as a ConfigError naming the parameter and the releases
    that have the field, or None for other errors."""
    found = _UNKNOWN_FIELD.findall(exc.message) if exc.code == 400 else []
    if not found:
        return None
    problems = []
    for path in found:
        param = next((p for prefix, p in _PARAMETERS if path.startswith(prefix)), path)
        table_path = re.sub(r"\[\d+\]", "[]", path)
        releases = flarekit_models.releases_with("ray.io/v1", "RayJob", table_path)
        kuberay = [r.split("@", 1)[1] for r in releases if r.startswith("kuberay@")]
        expected = (
            f"KubeRay {', '.join(kuberay)} (which have {path}), or {param} left unset"
            if kuberay
            else f"{param} left unset"
        )
        problems.append(
            Problem(param, path, "the KubeRay release on this cluster has no such field", expected)
        )
    return ConfigError(problems, f"RayJob {name!r}")
