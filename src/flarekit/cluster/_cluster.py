"""`Cluster`: one Ray cluster on Kubernetes, from its configuration to its teardown.

Why: a data scientist wants `Cluster(config).apply()`, then `wait_ready()`, then an address
to connect to, without knowing that this means a RayCluster (or an AppWrapper holding one),
Kueue labels, head Services and Routes. The order of work is the point:

1. the configuration is validated, and nothing is sent if it is wrong;
2. the Kueue queue is resolved (the named LocalQueue must exist, else the namespace's default
   one is used; see :func:`flarekit.kueue.maybe_local_queue`), so a missing queue is an error
   before anything is created and the label is never dropped;
3. the object is sent with server-side apply (created, or updated in place);
4. the stored object is checked to still carry the Kueue labels; if it does not (an admission
   webhook removed them), what this call created is deleted again so that nothing runs
   outside the queue. Whatever fails after something was created, the new objects are
   removed before the error is raised; objects that existed before are never deleted.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, TypeVar, overload

import flarekit.client
import flarekit.compat
import flarekit.kueue
import flarekit.ray
from flarekit._events import events_about, pod_names
from flarekit._json import JsonObject
from flarekit._objects import metadata_of
from flarekit._plan import Plan
from flarekit._validation import ConfigError
from flarekit._wait import Clock, SystemClock, WaitTimeout, wait_until
from flarekit._write_plan import WritePlan, execute
from flarekit._write_plan import dry_run as dry_run_plan
from flarekit.cluster import _endpoints
from flarekit.cluster._client_tls import generate_tls_cert
from flarekit.cluster._config import ClusterConfiguration
from flarekit.cluster._dashboard_access import ClusterDashboard, endpoint_port, never_resolves
from flarekit.cluster._details import ClusterDetails, group_rows, ray_report
from flarekit.cluster._forward import ClientForward, open_head_forward, scoped_client_url
from flarekit.cluster._prechecks import (
    check_not_taken,
    check_priority_class,
    check_queue_labels_kept,
    refuse_autoscaling_under_kueue,
)
from flarekit.cluster._read import from_raycluster
from flarekit.cluster._render import render, to_dict, to_yaml
from flarekit.cluster._status import (
    ClusterState,
    ClusterStatus,
    cluster_status,
    head_service_name,
    owning_appwrapper,
)
from flarekit.cluster._wrapper import (
    appwrapper_kind,
    appwrapper_version,
    is_mcad,
    refuse_kueue_options,
)
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from pathlib import Path

    from flarekit._plan import Plan
    from flarekit._progress import Progress
    from flarekit.client import Client, PortForward
    from flarekit.cluster._client_tls import RayClientTLS
    from flarekit.ray import RayJobClient, Verify
    from flarekit_models import KubeResource
    from flarekit_models.core.v1 import Event

__all__ = ["Cluster"]

#: RayCluster fields only some KubeRay releases have, and the option that sets each (for
#: errors naming the option; the wrapped form first).
R = TypeVar("R", bound="KubeResource")

_PARAMETERS = tuple(
    (f"{prefix}spec.{path}", option)
    for prefix in ("spec.components[0].template.", "")
    for path, option in (
        ("gcsFaultToleranceOptions", "enable_gcs_ft"),
        ("autoscalerOptions", "autoscaler_idle_timeout_seconds"),
        ("enableInTreeAutoscaling", "enable_autoscaling"),
    )
)


def _as_dict(obj: KubeResource | None) -> JsonObject | None:
    return obj.to_dict() if obj is not None else None


class Cluster:
    """A Ray cluster described by a :class:`ClusterConfiguration`, on the cluster `client`
    talks to (`Client()` by default: the current kubeconfig).

    `config.namespace=None` means the client's namespace. Nothing is sent until a method
    needs the server; :meth:`to_yaml` and :meth:`to_dict` never do.
    """

    def __init__(self, config: ClusterConfiguration, client: Client | None = None) -> None:
        if not isinstance(config, ClusterConfiguration):
            raise TypeError(f"config must be a ClusterConfiguration, got {type(config).__name__}")
        self.config = config
        self._client = client
        #: The AppWrapper's name when it differs from the RayCluster's (attached clusters).
        self._appwrapper_name: str | None = None
        #: (namespace, queue) the last apply wrote the cluster into, its queue checked then.
        self._queued: tuple[str | None, str | None] | None = None
        #: The port-forward behind `local_client_url()` (closed by `close()`).
        self._client_forward = ClientForward()

    def __repr__(self) -> str:
        kind = "AppWrapper" if self.config.appwrapper else "RayCluster"
        where = self.config.namespace or "<client namespace>"
        return f"Cluster({kind} {where}/{self.config.name})"

    # -- where ----------------------------------------------------------------------------------

    @property
    def client(self) -> flarekit.client.Client:
        """The client in use (made from the current kubeconfig on first use)."""
        if self._client is None:
            self._client = flarekit.client.Client()
        return self._client

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def namespace(self) -> str:
        """`config.namespace`, else the client's namespace, else ``default``."""
        return self.config.namespace or self.client.namespace or "default"

    @property
    def appwrapper_name(self) -> str:
        return self._appwrapper_name or self.config.name

    # -- offline --------------------------------------------------------------------------------

    def to_dict(self) -> JsonObject:
        """What :meth:`apply` sends (before the queue is resolved), as Kubernetes JSON."""
        return to_dict(self.config)

    def to_yaml(self) -> str:
        """:meth:`to_dict` as YAML, e.g. to review or to `kubectl apply -f`."""
        return to_yaml(self.config)

    # -- reading --------------------------------------------------------------------------------

    def _get(self, kind: type[R], name: str) -> R | None:
        try:
            return self.client.get(kind, name, namespace=self.namespace)
        except flarekit.client.NotFound:
            return None

    def _read(self) -> tuple[ray_v1.RayCluster | None, KubeResource | None]:
        """(RayCluster, AppWrapper) as stored; either may be None. Raises `NotFound` when
        neither exists."""
        if self.config.appwrapper:
            # In the version the server serves: v1beta2, or MCAD's v1beta1 (read as it is).
            kind = appwrapper_kind(self.client)
            top = self.client.get(kind, self.appwrapper_name, namespace=self.namespace)
            return self._get(ray_v1.RayCluster, self.name), top
        raycluster = self.client.get(ray_v1.RayCluster, self.name, namespace=self.namespace)
        owner = owning_appwrapper(raycluster)
        if not owner:
            return raycluster, None
        try:
            kind = appwrapper_kind(self.client)
            return raycluster, self.client.get(kind, owner, namespace=self.namespace)
        except flarekit.client.NotFound:
            return raycluster, None

    def status(self) -> ClusterStatus:
        """The cluster's state now (`NotFound` if it does not exist)."""
        raycluster, wrapper = self._read()
        return cluster_status(raycluster, wrapper, name=self.name, namespace=self.namespace)

    def events(self) -> list[Event]:
        """The events about the cluster, oldest first: its RayCluster, its AppWrapper (when
        wrapped) and Kueue Workload, and its pods (see `flarekit._events`). A list of the
        cluster's pods and one of the namespace's events."""
        subjects = [("RayCluster", self.name)]
        if self.config.appwrapper:
            subjects.append(("AppWrapper", self.appwrapper_name))
        pods = pod_names(self.client, self.namespace, [{"ray.io/cluster": self.name}])
        return events_about(self.client, self.namespace, [*subjects, *pods], workloads_of=subjects)

    def resource(self) -> KubeResource:
        """The object the cluster is on the server, as stored: its AppWrapper when wrapped,
        else its RayCluster (`NotFound` if it does not exist). ``kubectl get -o yaml`` shows
        the same object."""
        raycluster, wrapper = self._read()
        top = wrapper if wrapper is not None else raycluster
        assert top is not None, "_read raises NotFound when neither exists"
        return top

    def cluster_uri(self) -> str:
        """The Ray client address inside the Kubernetes cluster: ``ray://<svc>.<ns>.svc:10001``.

        Reads the head Service name and client port KubeRay reports, and falls back to
        KubeRay's naming when the cluster does not exist yet.
        """
        raycluster = self._get(ray_v1.RayCluster, self.name)
        service = head_service_name(raycluster, self.name)
        port = endpoint_port(raycluster, "client", _endpoints.CLIENT_PORT)
        return f"ray://{service}.{self.namespace}.svc:{port}"

    def local_client_url(self, *, port_forward: bool | None = None) -> str:
        """The address for ``ray.init()``, read from the server: ``ray://<host>`` when a Route,
        Ingress or HTTPRoute exposes the head Service's client port. Else, by `port_forward`:
        True (the default outside a pod) forwards a local port to the running head pod through
        the API server and answers ``ray://127.0.0.1:<port>``; False (the default inside a
        pod) answers the head Service's in-cluster ``ray://<service>.<ns>.svc:<port>``.

        The forward belongs to this object: later calls reuse it while the same head pod
        runs, and :meth:`close` (or leaving ``with cluster:``, or :meth:`down`) ends it; for a
        forward scoped to a block, use :meth:`local_client`. Nothing is assumed: `NotFound`
        when the cluster does not exist, :class:`~flarekit.cluster.RayClientUnavailable` when
        its head Service or running head pod does not (yet), or it has no client port. On a
        cluster with Ray mTLS, first :meth:`generate_tls_cert` and ``export_env()``.
        """
        return self._client_forward.url(self, self.client, self.namespace, self.name, port_forward)

    @contextlib.contextmanager
    def local_client(self) -> Iterator[str]:
        """``with cluster.local_client() as url: ray.init(url)``: the Ray client address, by
        a port-forward to the head pod that ends with the block (unless a Route, Ingress or
        HTTPRoute exposes the client port: then its ``ray://<host>``, and no forward)."""
        with scoped_client_url(self.client, self.namespace, self.name) as url:
            yield url

    def port_forward(self, port: int, *, local_port: int = 0) -> PortForward:
        """A forward (use it in ``with``) from `local_port` on 127.0.0.1 (0: any free port) to
        `port` of the cluster's running head pod, through the API server."""
        return open_head_forward(
            self.client, self.namespace, self.name, port, local_port=local_port
        )

    def close(self) -> None:
        """End the port-forward :meth:`local_client_url` started, if any (the cluster itself
        is untouched: :meth:`down` deletes it)."""
        self._client_forward.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def generate_tls_cert(
        self,
        *,
        days: int = 30,
        force_regenerate: bool = False,
        base_dir: Path | str | None = None,
    ) -> RayClientTLS:
        """A client certificate for ``ray.init("ray://...")`` on a cluster with Ray mTLS,
        signed by the cluster's CA Secret (see :func:`flarekit.cluster.generate_tls_cert`);
        call ``.export_env()`` on the result to point Ray at it."""
        return generate_tls_cert(
            self.name,
            self.namespace,
            days=days,
            force_regenerate=force_regenerate,
            base_dir=base_dir,
            client=self.client,
        )

    def cluster_dashboard_uri(self) -> str:
        """The dashboard URL from a Route, Ingress or HTTPRoute to the head Service.

        Raises :class:`~flarekit.cluster.DashboardNotExposed` (a `LookupError`) saying that
        none was found and how to port-forward instead.
        """
        dashboard = self._dashboard()
        return dashboard.exposed_uri(dashboard.raycluster())

    def dashboard_client(
        self, *, timeout: float = 30.0, retries: int = 3, verify: Verify = True
    ) -> RayJobClient:
        """A :class:`~flarekit.ray.RayJobClient` of the cluster's Ray dashboard: at
        :meth:`cluster_dashboard_uri` when a Route, Ingress or HTTPRoute exposes it (`verify`
        as for `RayJobClient`), else through the API server's proxy to the head Service, with
        this client's credentials (as ``kubectl proxy`` reaches it; the user needs
        ``get services/proxy`` in the namespace). Raises `NotFound` when the cluster does not
        exist."""
        dashboard = self._dashboard()
        return dashboard.client_at(
            dashboard.route(), timeout=timeout, retries=retries, verify=verify
        )

    @property
    def job_client(self) -> RayJobClient:
        """:meth:`dashboard_client` with its defaults, under the name codeflare-sdk gives it
        (``cluster.job_client``), so code written for codeflare finds it."""
        return self.dashboard_client()

    def is_dashboard_ready(self, *, timeout: float = 5.0, verify: Verify = True) -> bool:
        """Whether the Ray dashboard answers (its Jobs API's ``/api/version``), at
        :meth:`cluster_dashboard_uri` or through the API server (see
        :meth:`dashboard_client`). False when it cannot be reached or answers with an error;
        `verify` is as for :class:`flarekit.ray.RayJobClient`."""
        return self._dashboard().answer(timeout, verify) is None

    def _dashboard(self) -> ClusterDashboard:
        return ClusterDashboard(self.client, self.namespace, self.name)

    def details(self) -> ClusterDetails:
        """Status, addresses, queue admission and resources per group, read from the server."""
        raycluster, wrapper = self._read()
        rc, aw = _as_dict(raycluster), _as_dict(wrapper)
        status = cluster_status(raycluster, aw, name=self.name, namespace=self.namespace)
        source = aw if aw is not None else rc
        try:
            described = from_raycluster(source) if source is not None else self.config
        except (ConfigError, ValueError):
            described = self.config  # an object no configuration can express
        try:
            dashboard = self.cluster_dashboard_uri()
            reported = None if never_resolves(dashboard) else ray_report(dashboard)
        except _endpoints.DashboardNotExposed as exc:
            dashboard, reported = str(exc), None
        return ClusterDetails(
            status=status,
            kind=_kind_of(aw),
            ray_version=described.ray_version,
            image=described.effective_image,
            cluster_uri=self.cluster_uri(),
            dashboard=dashboard,
            admission=self._admission(wrapper if wrapper is not None else raycluster, status),
            groups=group_rows(described),
            ray_resources=reported,
        )

    def _admission(self, top: KubeResource | None, status: ClusterStatus) -> str | None:
        """Kueue's word on the cluster's Workload, when it is queued."""
        if top is None or not status.queue:
            return None

        workload = flarekit.kueue.workload_for(self.client, top)
        if workload is None:
            return "no Workload yet (Kueue has not seen the cluster)"
        return str(flarekit.kueue.admission_state(workload))

    # -- writing --------------------------------------------------------------------------------

    @overload
    def apply(
        self, *, force: bool = False, no_queue: bool = False, dry_run: Literal[False] = False
    ) -> Cluster: ...

    @overload
    def apply(
        self, *, force: bool = False, no_queue: bool = False, dry_run: Literal[True]
    ) -> Plan: ...

    def apply(
        self, *, force: bool = False, no_queue: bool = False, dry_run: bool = False
    ) -> Cluster | Plan:
        """Create the cluster, or update it in place (server-side apply); returns `self`.
        `dry_run=True` makes every check and read, then sends the apply as a server-side dry
        run and returns the `Plan` of what it would change (the server's defaults and
        admission webhooks included); nothing is written.
        `no_queue=True` applies it without a Kueue queue on purpose (refused with a
        ``local_queue`` or ``priority_class``; a `QueueOptOutWarning` where Kueue is
        installed, since Kueue may still take or hold it).

        Checks the configuration (validated when it was made, or last changed: `ConfigError`,
        nothing sent), then resolves the Kueue queue (`QueueNotFound`, nothing created),
        refuses autoscaling under Kueue and a priority class the server does not have
        (`ConfigError`, see `flarekit.cluster._prechecks`), and checks the object against the
        KubeRay (and AppWrapper) release the cluster runs (`FieldUnavailable` naming the
        option, nothing created; see `flarekit.compat.prepare_write`). `force=True` takes
        over fields another manager owns instead of raising `Conflict`. The write itself is
        one server-side apply (see `flarekit._write_plan`); a cluster this call created is deleted
        again when the server stored it without its queue labels (`LabelsDropped`).

        On a cluster running the legacy MCAD AppWrapper (workload.codeflare.dev/v1beta1), a
        wrapped cluster is written in v1beta1 and queued by MCAD, which dispatches it itself:
        Kueue does not queue v1beta1 AppWrappers, so ``local_queue`` and ``priority_class``
        are refused (`ConfigError`, nothing created) rather than written as labels nothing
        would act on, and no default LocalQueue is looked up.
        """
        plan, config = self._plan(force, no_queue)
        if dry_run:
            return dry_run_plan(self.client, plan)
        execute(self.client, plan)
        self.config = config
        self._queued = (config.namespace, config.local_queue)
        return self

    def _plan(self, force: bool, no_queue: bool) -> tuple[WritePlan, ClusterConfiguration]:
        """The write `apply` sends and the configuration it writes (namespace and queue
        resolved): everything but the check that the name is not taken is read here."""
        report = self.config.validate_if_changed()
        flarekit.kueue.check_no_queue(
            report, no_queue, self.config.local_queue, self.config.priority_class
        )
        report.raise_if_problems()
        namespace = self.namespace
        queue = self.config.local_queue
        if self.config.appwrapper and is_mcad(appwrapper_version(self.client)):
            refuse_kueue_options(self.client, self.config)  # MCAD queues it, not Kueue
        elif no_queue:
            top = "AppWrapper" if self.config.appwrapper else "RayCluster"
            flarekit.kueue.opt_out_of_queue(
                self.client, namespace, f"{top} {namespace}/{self.config.name}"
            )
        elif self._queued is None or self._queued != (namespace, queue):
            # Checked by the last apply of this cluster, into that queue: not read again.
            queue = flarekit.kueue.maybe_local_queue(self.client, namespace, queue)
            refuse_autoscaling_under_kueue(self.client, self.config, queue)
            check_priority_class(self.client, self.config)
        # Validated above: a copy with the resolved namespace and queue, not checked again.
        config = copy.copy(self.config)
        config.namespace, config.local_queue = namespace, queue
        model = flarekit.compat.prepare_write(
            self.client, render(config, validated=True), parameters=_PARAMETERS, subject=repr(self)
        )
        if config.appwrapper and self._appwrapper_name and model.metadata is not None:
            model.metadata.name = self._appwrapper_name

        def not_taken(client: Client) -> None:
            check_not_taken(client, config)

        def queued(stored: KubeResource, existed: bool) -> None:
            check_queue_labels_kept(stored, config, existed)

        plan = WritePlan(repr(self), [model], (not_taken,), force=force, after_write=queued)
        return plan, config

    up = apply

    def diff(self, *, force: bool = False, no_queue: bool = False) -> Plan:
        """What :meth:`apply` would change, on the fields this client's field manager owns:
        ``apply(dry_run=True)``; ``str()`` of the result is a unified diff, and its
        ``exit_code`` is kubectl diff's (0: no change, 1: changes)."""
        return self.apply(force=force, no_queue=no_queue, dry_run=True)

    def down(
        self,
        *,
        wait: bool = False,
        timeout: float = 300.0,
        poll: float = 0.5,
        max_poll: float = 5.0,
        progress: bool | Progress = True,
        clock: Clock | None = None,
    ) -> bool:
        """Delete the cluster (the AppWrapper when wrapped: it removes what it made).

        Returns False when there was nothing to delete. With `wait=True`, returns once the
        object is gone (`WaitTimeout` after `timeout` seconds, e.g. while finalizers hold it).
        """
        kind: type[KubeResource]
        if self.config.appwrapper:
            kind, name = appwrapper_kind(self.client), self.appwrapper_name
        else:
            owner = owning_appwrapper(self._get(ray_v1.RayCluster, self.name))
            # Deleting a wrapped RayCluster alone would only make its AppWrapper recreate it.
            if owner:
                kind, name = appwrapper_kind(self.client), owner
            else:
                kind, name = ray_v1.RayCluster, self.name
        self.close()  # the head pod goes: so does the forward to it
        try:
            self.client.delete(kind, name, namespace=self.namespace)
        except flarekit.client.NotFound:
            return False
        if wait:
            wait_until(
                lambda: self._get(kind, name),
                lambda obj: obj is None,
                None,
                timeout=timeout,
                describe=f"{kind.__name__} {self.namespace}/{name} to be deleted",
                state=_deletion_state,
                poll=poll,
                max_poll=max_poll,
                progress=progress,
                clock=clock,
            )
        return True

    # -- waiting --------------------------------------------------------------------------------

    def wait_ready(
        self,
        timeout: float = 600.0,
        *,
        poll: float = 1.0,
        max_poll: float = 5.0,
        progress: bool | Progress = True,
        clock: Clock | None = None,
        dashboard_check: bool = True,
    ) -> ClusterStatus:
        """Return the status once the cluster is READY and, when `dashboard_check` is true,
        once its dashboard answers (:meth:`is_dashboard_ready`: through its Route, Ingress or
        HTTPRoute, else through the API server): only then can jobs be submitted to it. A
        dashboard whose exposed host is under ``.invalid`` (RFC 6761: it never resolves; the
        practice cluster's are), or that the API server has no proxy to (it answers 404, as
        an emulator may), is not waited for.

        Raises `TerminalFailure` quoting KubeRay's or the AppWrapper's reason when it fails,
        and `WaitTimeout` after `timeout` seconds (for a queued cluster, with Kueue's reason
        for not admitting it; for a ready cluster, naming the dashboard that did not answer).
        """
        clock = SystemClock() if clock is None else clock
        started = clock.now()
        status = self._wait_status(timeout, poll, max_poll, progress, clock)
        if dashboard_check:
            self._wait_dashboard(timeout - (clock.now() - started), poll, max_poll, progress, clock)
        return status

    def _wait_dashboard(
        self,
        timeout: float,
        poll: float,
        max_poll: float,
        progress: bool | Progress,
        clock: Clock,
    ) -> None:
        self._dashboard().wait(timeout, poll, max_poll, progress, clock)

    def _wait_status(
        self,
        timeout: float,
        poll: float,
        max_poll: float,
        progress: bool | Progress,
        clock: Clock,
    ) -> ClusterStatus:
        describe = f"Ray cluster {self.namespace}/{self.name} to be ready"
        try:
            return wait_until(
                self.status,
                lambda s: s.ready,
                lambda s: (s.reason or "failed") if s.state is ClusterState.FAILED else None,
                timeout=timeout,
                describe=describe,
                poll=poll,
                max_poll=max_poll,
                progress=progress,
                clock=clock,
                state=_status_line,
                count=lambda s: (
                    (s.workers_ready, s.workers_desired)
                    if s.workers_ready is not None and s.workers_desired is not None
                    else None
                ),
            )
        except WaitTimeout as exc:
            why = self._queued_reason()
            if why is None:
                raise
            raise WaitTimeout(
                what=describe,
                timeout=exc.timeout,
                elapsed=exc.elapsed,
                last_state=f"{exc.last_state}; Kueue: {why}",
            ) from None

    def _queued_reason(self) -> str | None:
        try:
            raycluster, wrapper = self._read()
            status = cluster_status(raycluster, wrapper)
            if status.state is not ClusterState.QUEUED:
                return None
            return self._admission(wrapper if wrapper is not None else raycluster, status)
        except Exception:  # the timeout is the error to report; this is only a hint
            return None


def _kind_of(wrapper: JsonObject | None) -> str:
    if wrapper is None:
        return "RayCluster"

    return "AppWrapper (MCAD, v1beta1)" if is_mcad(wrapper) else "AppWrapper"


def _status_line(status: ClusterStatus) -> str:
    text = f"{status.state.value}, workers {status.workers}"
    return f"{text} ({status.reason})" if status.reason else text


def _deletion_state(obj: KubeResource | None) -> str:
    meta = metadata_of(obj) if obj is not None else None
    if obj is None:
        return "deleted"
    finalizers = list((meta.finalizers if meta is not None else None) or [])
    return f"being deleted, finalizers: {', '.join(finalizers)}" if finalizers else "being deleted"
