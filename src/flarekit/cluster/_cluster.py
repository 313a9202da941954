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
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, TypeVar, overload

from flarekit._json import JsonObject
from flarekit._objects import labels_of, metadata_of, name_of
from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit._validation import ConfigError, Problem
from flarekit._wait import Clock, SystemClock, WaitTimeout, wait_until
from flarekit.cluster._client_url import CLIENT_PORT
from flarekit.cluster._config import ClusterConfiguration
from flarekit.cluster._status import (
    ClusterState,
    ClusterStatus,
    cluster_status,
    head_service_name,
    owning_appwrapper,
)

if TYPE_CHECKING:
    from pathlib import Path

    from flarekit._plan import Plan
    from flarekit._progress import Progress
    from flarekit.client._client import Client
    from flarekit.client._portforward import PortForward
    from flarekit.cluster._client_tls import RayClientTLS
    from flarekit.cluster._details import ClusterDetails
    from flarekit.ray import RayJobClient, RayJobsError
    from flarekit.ray._jobs_http import Verify
    from flarekit_models._base import KubeResource
    from flarekit_models.core.v1 import Event
    from flarekit_models.ray.v1 import RayCluster

__all__ = ["CLIENT_PORT", "Cluster", "LabelsDropped"]

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


class LabelsDropped(RuntimeError):
    """The server stored the cluster without its Kueue labels, so it would not be queued."""


def _as_dict(obj: KubeResource | None) -> JsonObject | None:
    return obj.to_dict() if obj is not None else None


def _endpoint(raycluster: RayCluster | None, name: str, default: int) -> int:
    """A port KubeRay reports in `status.endpoints` (strings), else `default`."""
    status = raycluster.status if raycluster is not None else None
    endpoints = (status.endpoints if status is not None else None) or {}
    try:
        return int(endpoints.get(name) or default)
    except ValueError:
        return default


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
        #: The port-forward behind `local_client_url()` (closed by `close()`).
        self._forward: PortForward | None = None
        self._finalizer: weakref.finalize[[], Cluster] | None = None

    def __repr__(self) -> str:
        kind = "AppWrapper" if self.config.appwrapper else "RayCluster"
        where = self.config.namespace or "<client namespace>"
        return f"Cluster({kind} {where}/{self.config.name})"

    # -- where ----------------------------------------------------------------------------------

    @property
    def client(self) -> Client:
        """The client in use (made from the current kubeconfig on first use)."""
        if self._client is None:
            from flarekit.client._client import Client

            self._client = Client()
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
        from flarekit.cluster._render import to_dict

        return to_dict(self.config)

    def to_yaml(self) -> str:
        """:meth:`to_dict` as YAML, e.g. to review or to `kubectl apply -f`."""
        from flarekit.cluster._render import to_yaml

        return to_yaml(self.config)

    # -- reading --------------------------------------------------------------------------------

    def _get(self, kind: type[R], name: str) -> R | None:
        from flarekit.client._errors import NotFound

        try:
            return self.client.get(kind, name, namespace=self.namespace)
        except NotFound:
            return None

    def _read(self) -> tuple[RayCluster | None, KubeResource | None]:
        """(RayCluster, AppWrapper) as stored; either may be None. Raises `NotFound` when
        neither exists."""
        from flarekit.client._errors import NotFound
        from flarekit.cluster._wrapper import appwrapper_kind
        from flarekit_models.ray.v1 import RayCluster

        if self.config.appwrapper:
            # In the version the server serves: v1beta2, or MCAD's v1beta1 (read as it is).
            kind = appwrapper_kind(self.client)
            top = self.client.get(kind, self.appwrapper_name, namespace=self.namespace)
            return self._get(RayCluster, self.name), top
        raycluster = self.client.get(RayCluster, self.name, namespace=self.namespace)
        owner = owning_appwrapper(raycluster)
        if not owner:
            return raycluster, None
        try:
            kind = appwrapper_kind(self.client)
            return raycluster, self.client.get(kind, owner, namespace=self.namespace)
        except NotFound:
            return raycluster, None

    def status(self) -> ClusterStatus:
        """The cluster's state now (`NotFound` if it does not exist)."""
        raycluster, wrapper = self._read()
        return cluster_status(raycluster, wrapper, name=self.name, namespace=self.namespace)

    def events(self) -> list[Event]:
        """The events about the cluster, oldest first: its RayCluster, its AppWrapper (when
        wrapped) and Kueue Workload, and its pods (see `flarekit._events`). A list of the
        cluster's pods and one of the namespace's events."""
        from flarekit._events import events_about, pod_names

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
        from flarekit_models.ray.v1 import RayCluster

        raycluster = self._get(RayCluster, self.name)
        service = head_service_name(raycluster, self.name)
        port = _endpoint(raycluster, "client", CLIENT_PORT)
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
        from flarekit.cluster._client_url import client_address
        from flarekit.cluster._forward import forward_target, in_a_pod

        address = client_address(self.client, self.namespace, self.name)
        if address.exposed_host:
            return f"ray://{address.exposed_host}"
        forward = not in_a_pod() if port_forward is None else port_forward
        if not forward:
            return address.in_cluster
        pod, port = forward_target(self.client, self.namespace, self.name, address.port)
        current = self._forward
        if current is None or current.closed or (current.pod, current.port) != (pod, port):
            self.close()  # none yet, or the head pod was replaced
            current = self.client.port_forward(pod, port, namespace=self.namespace).start()
            self._forward = current
            self._finalizer = weakref.finalize(self, current.close)
        return f"ray://127.0.0.1:{current.local_port}"

    @contextlib.contextmanager
    def local_client(self) -> Iterator[str]:
        """``with cluster.local_client() as url: ray.init(url)``: the Ray client address, by
        a port-forward to the head pod that ends with the block (unless a Route, Ingress or
        HTTPRoute exposes the client port: then its ``ray://<host>``, and no forward)."""
        from flarekit.cluster._client_url import client_address
        from flarekit.cluster._forward import forward_target

        address = client_address(self.client, self.namespace, self.name)
        if address.exposed_host:
            yield f"ray://{address.exposed_host}"
            return
        pod, port = forward_target(self.client, self.namespace, self.name, address.port)
        with self.client.port_forward(pod, port, namespace=self.namespace) as forward:
            yield f"ray://127.0.0.1:{forward.local_port}"

    def port_forward(self, port: int, *, local_port: int = 0) -> PortForward:
        """A forward (use it in ``with``) from `local_port` on 127.0.0.1 (0: any free port) to
        `port` of the cluster's running head pod, through the API server."""
        from flarekit.cluster._forward import open_head_forward

        return open_head_forward(
            self.client, self.namespace, self.name, port, local_port=local_port
        )

    def close(self) -> None:
        """End the port-forward :meth:`local_client_url` started, if any (the cluster itself
        is untouched: :meth:`down` deletes it)."""
        forward, self._forward = self._forward, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if forward is not None:
            forward.close()

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
        from flarekit.cluster._client_tls import generate_tls_cert

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
        from flarekit.cluster._dashboard import DEFAULT_DASHBOARD_PORT, find_dashboard_uri
        from flarekit_models.ray.v1 import RayCluster

        raycluster = self._get(RayCluster, self.name)
        return find_dashboard_uri(
            self.client,
            self.namespace,
            head_service_name(raycluster, self.name),
            port=_endpoint(raycluster, "dashboard", DEFAULT_DASHBOARD_PORT),
        )

    def dashboard_client(
        self, *, timeout: float = 30.0, retries: int = 3, verify: Verify = True
    ) -> RayJobClient:
        """A :class:`~flarekit.ray.RayJobClient` of the cluster's Ray dashboard: at
        :meth:`cluster_dashboard_uri` when a Route, Ingress or HTTPRoute exposes it (`verify`
        as for `RayJobClient`), else through the API server's proxy to the head Service, with
        this client's credentials (as ``kubectl proxy`` reaches it; the user needs
        ``get services/proxy`` in the namespace). Raises `NotFound` when the cluster does not
        exist."""
        return self._dashboard_client_at(
            self._dashboard_route(), timeout=timeout, retries=retries, verify=verify
        )

    @property
    def job_client(self) -> RayJobClient:
        """:meth:`dashboard_client` with its defaults, under the name codeflare-sdk gives it
        (``cluster.job_client``), so code written for codeflare finds it."""
        return self.dashboard_client()

    def _dashboard_route(self) -> tuple[str | None, RayCluster | None]:
        """The dashboard's exposed URL (None when nothing exposes it) and the RayCluster read
        to find it: one lookup that the dashboard checks share, instead of one per step."""
        from flarekit.cluster._dashboard import (
            DEFAULT_DASHBOARD_PORT,
            DashboardNotExposed,
            find_dashboard_uri,
        )
        from flarekit_models.ray.v1 import RayCluster

        raycluster = self._get(RayCluster, self.name)
        try:
            uri: str | None = find_dashboard_uri(
                self.client,
                self.namespace,
                head_service_name(raycluster, self.name),
                port=_endpoint(raycluster, "dashboard", DEFAULT_DASHBOARD_PORT),
            )
        except DashboardNotExposed:
            uri = None
        return uri, raycluster

    def _dashboard_client_at(
        self,
        route: tuple[str | None, RayCluster | None],
        *,
        timeout: float,
        retries: int,
        verify: Verify,
    ) -> RayJobClient:
        from flarekit.cluster._dashboard import DEFAULT_DASHBOARD_PORT
        from flarekit.cluster._dashboard_proxy import through_api_server
        from flarekit.ray import RayJobClient

        uri, raycluster = route
        if uri is None:
            return through_api_server(
                self.client,
                self.namespace,
                head_service_name(raycluster, self.name),
                _endpoint(raycluster, "dashboard", DEFAULT_DASHBOARD_PORT),
                timeout=timeout,
                retries=retries,
            )
        return RayJobClient(uri, verify=verify, timeout=timeout, retries=retries)

    def is_dashboard_ready(self, *, timeout: float = 5.0, verify: Verify = True) -> bool:
        """Whether the Ray dashboard answers (its Jobs API's ``/api/version``), at
        :meth:`cluster_dashboard_uri` or through the API server (see
        :meth:`dashboard_client`). False when it cannot be reached or answers with an error;
        `verify` is as for :class:`flarekit.ray.RayJobClient`."""

        return self._dashboard_answer(timeout, verify) is None

    def _dashboard_answer(
        self,
        timeout: float,
        verify: Verify,
        route: tuple[str | None, RayCluster | None] | None = None,
    ) -> RayJobsError | None:
        """None when the dashboard answers, else the error that says why not (`route`: a
        lookup already made)."""
        from flarekit.client._errors import NotFound
        from flarekit.ray import RayJobsError, RayJobValidationError

        try:
            if route is None:
                route = self._dashboard_route()
        except NotFound as exc:
            return RayJobValidationError("cluster", str(exc))
        uri = route[0]
        if uri is not None and _never_resolves(uri):
            return RayJobValidationError("address", f"{uri} never resolves")
        try:
            self._dashboard_client_at(route, timeout=timeout, retries=0, verify=verify).version()
        except RayJobsError as exc:
            return exc
        except NotFound as exc:
            return RayJobValidationError("cluster", str(exc))
        return None

    def details(self) -> ClusterDetails:
        """Status, addresses, queue admission and resources per group, read from the server."""
        from flarekit.cluster._dashboard import DashboardNotExposed
        from flarekit.cluster._details import ClusterDetails, group_rows, ray_report
        from flarekit.cluster._read import from_raycluster

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
            reported = None if _never_resolves(dashboard) else ray_report(dashboard)
        except DashboardNotExposed as exc:
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
        from flarekit.kueue import admission_state, workload_for

        workload = workload_for(self.client, top)
        if workload is None:
            return "no Workload yet (Kueue has not seen the cluster)"
        return str(admission_state(workload))

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

        Validates first (`ConfigError`, nothing sent), then resolves the Kueue queue
        (`QueueNotFound`, nothing created), refuses autoscaling under Kueue and a priority
        class the server does not have (`ConfigError`, see `flarekit.cluster._prechecks`),
        and checks the object against the KubeRay (and
        AppWrapper) release the cluster runs (`FieldUnavailable` naming the option, nothing
        created; see `flarekit.compat.prepare_write`). `force=True` takes over fields another
        manager owns instead of raising `Conflict`.

        On a cluster running the legacy MCAD AppWrapper (workload.codeflare.dev/v1beta1), a
        wrapped cluster is written in v1beta1 and queued by MCAD, which dispatches it itself:
        Kueue does not queue v1beta1 AppWrappers, so ``local_queue`` and ``priority_class``
        are refused (`ConfigError`, nothing created) rather than written as labels nothing
        would act on, and no default LocalQueue is looked up.
        """
        from flarekit.cluster._prechecks import (
            check_priority_class,
            refuse_autoscaling_under_kueue,
        )
        from flarekit.cluster._render import render
        from flarekit.cluster._wrapper import appwrapper_version, is_mcad, refuse_kueue_options
        from flarekit.compat import prepare_write
        from flarekit.kueue import check_no_queue, maybe_local_queue, opt_out_of_queue

        report = self.config.validate()
        check_no_queue(report, no_queue, self.config.local_queue, self.config.priority_class)
        report.raise_if_problems()
        namespace = self.namespace
        queue = None
        if self.config.appwrapper and is_mcad(appwrapper_version(self.client)):
            refuse_kueue_options(self.client, self.config)  # MCAD queues it, not Kueue
        elif no_queue:
            top = "AppWrapper" if self.config.appwrapper else "RayCluster"
            opt_out_of_queue(self.client, namespace, f"{top} {namespace}/{self.config.name}")
        else:
            queue = maybe_local_queue(self.client, namespace, self.config.local_queue)
            refuse_autoscaling_under_kueue(self.client, self.config, queue)
            check_priority_class(self.client, self.config)
        # Validated above: a copy with the resolved namespace and queue, not checked again.
        config = copy.copy(self.config)
        config.namespace, config.local_queue = namespace, queue
        raycluster = self._check_not_taken(config)
        model = prepare_write(
            self.client, render(config, validated=True), parameters=_PARAMETERS, subject=repr(self)
        )
        kind = type(model)
        name = self.appwrapper_name if config.appwrapper else config.name
        if config.appwrapper and self._appwrapper_name and model.metadata is not None:
            model.metadata.name = self._appwrapper_name
        # For a bare RayCluster the object to write is the one just read.
        stored = self._get(kind, name) if config.appwrapper else raycluster
        existed = stored is not None
        if dry_run:
            from flarekit._plan import Plan, change_of

            result = self.client.apply(model, force=force, dry_run=True)
            return Plan((change_of(model, stored, result, self.client.field_manager),))
        created: list[tuple[type[KubeResource], str]] = []
        try:
            stored = self.client.apply(model, force=force)
            if not existed:
                created.append((kind, name))
            self._check_labels(stored, config, existed)
        except BaseException as exc:
            self._undo(created, exc)
            raise
        self.config = config
        return self

    up = apply

    def diff(self, *, force: bool = False, no_queue: bool = False) -> Plan:
        """What :meth:`apply` would change, on the fields this client's field manager owns:
        ``apply(dry_run=True)``; ``str()`` of the result is a unified diff, and its
        ``exit_code`` is kubectl diff's (0: no change, 1: changes)."""
        return self.apply(force=force, no_queue=no_queue, dry_run=True)

    def _check_not_taken(self, config: ClusterConfiguration) -> RayCluster | None:
        """Refuse to wrap a standalone RayCluster, or to replace a wrapped one by a bare one;
        returns the RayCluster of that name as stored (None if there is none)."""
        from flarekit_models.ray.v1 import RayCluster

        stored = self._get(RayCluster, config.name)
        if stored is None:
            return None
        owner = owning_appwrapper(stored)
        where = f"{config.namespace}/{config.name}"
        if config.appwrapper and owner is None:
            problem = Problem(
                "appwrapper",
                True,
                f"RayCluster {where} already exists outside an AppWrapper",
                "appwrapper=False to update it, another name, or down() it first",
            )
        elif not config.appwrapper and owner is not None:
            problem = Problem(
                "appwrapper",
                False,
                f"RayCluster {where} belongs to AppWrapper {owner!r}",
                f"appwrapper=True to update it through AppWrapper {owner!r}",
            )
        else:
            return stored
        raise ConfigError([problem])

    def _check_labels(
        self, stored: KubeResource, config: ClusterConfiguration, existed: bool
    ) -> None:
        labels = labels_of(stored)
        wanted = {QUEUE_LABEL: config.local_queue, PRIORITY_LABEL: config.priority_class}
        missing = {k: v for k, v in wanted.items() if v and labels.get(k) != v}
        if not missing:
            return
        what = ", ".join(f"{k}={v}" for k, v in missing.items())
        kind = type(stored).__name__
        fate = "it existed before, so it was left in place" if existed else "it was deleted again"
        raise LabelsDropped(
            f"the server stored {kind} {config.namespace}/{name_of(stored)} without the "
            f"label(s) {what} (an admission webhook may remove them), so it would run outside "
            f"the queue; {fate}"
        )

    def _undo(self, created: list[tuple[type[KubeResource], str]], error: BaseException) -> None:
        """Delete what this call created, newest first; failures become notes on `error`."""
        from flarekit.client._errors import ApiError, NotFound

        for kind, name in reversed(created):
            try:
                self.client.delete(kind, name, namespace=self.namespace)
            except NotFound:
                pass
            except ApiError as exc:
                error.add_note(
                    f"could not delete {kind.__name__} {self.namespace}/{name} created by this "
                    f"call: {exc}; delete it by hand"
                )

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
        from flarekit.client._errors import NotFound
        from flarekit.cluster._wrapper import appwrapper_kind
        from flarekit_models.ray.v1 import RayCluster

        kind: type[KubeResource]
        if self.config.appwrapper:
            kind, name = appwrapper_kind(self.client), self.appwrapper_name
        else:
            owner = owning_appwrapper(self._get(RayCluster, self.name))
            # Deleting a wrapped RayCluster alone would only make its AppWrapper recreate it.
            if owner:
                kind, name = appwrapper_kind(self.client), owner
            else:
                kind, name = RayCluster, self.name
        self.close()  # the head pod goes: so does the forward to it
        try:
            self.client.delete(kind, name, namespace=self.namespace)
        except NotFound:
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
        from flarekit.ray import RayJobsApiError

        route = self._dashboard_route()
        uri = route[0]
        if uri is None:
            answer = self._dashboard_answer(5.0, True, route)
            if answer is None:
                return
            if isinstance(answer, RayJobsApiError) and answer.status == 404:
                return  # no proxy to it on this server: nothing can ever answer there
        elif _never_resolves(uri):
            return  # e.g. the practice cluster's hosts: nothing can ever answer there
        where = f"at {uri}" if uri is not None else "through the API server"
        wait_until(
            self.is_dashboard_ready,
            bool,
            None,
            timeout=max(timeout, 0.0),
            describe=f"the Ray dashboard of {self.namespace}/{self.name} {where} to answer",
            poll=poll,
            max_poll=max_poll,
            progress=progress,
            clock=clock,
            state=lambda ready: "answering" if ready else "not answering yet",
        )

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


def _never_resolves(uri: str) -> bool:
    """Whether `uri`'s host is under ``.invalid``, which by RFC 6761 never resolves."""
    from urllib.parse import urlsplit

    host = (urlsplit(uri).hostname or "").rstrip(".")
    return host == "invalid" or host.endswith(".invalid")


def _kind_of(wrapper: JsonObject | None) -> str:
    if wrapper is None:
        return "RayCluster"
    from flarekit.cluster._wrapper import is_mcad

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
