"""The Ray dashboard of one cluster as `Cluster` reaches it: where it is exposed, a client of
it there or through the API server's proxy, and whether it answers.

Why apart from `_cluster`: one lookup (the RayCluster and what routes to its head Service)
serves every step of a dashboard check (`route`), instead of one lookup per step, and the
steps are one concern of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import flarekit.client
import flarekit.ray
from flarekit._wait import Clock, wait_until
from flarekit.cluster import _endpoints
from flarekit.cluster._status import head_service_name
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit._progress import Progress
    from flarekit.client import Client
    from flarekit.ray import RayJobClient, RayJobsError, Verify

__all__ = ["ClusterDashboard", "Route", "endpoint_port", "never_resolves"]

#: The dashboard's exposed URL (None when nothing exposes it) and the RayCluster read to find
#: it (None when there is none).
Route = tuple[str | None, "ray_v1.RayCluster | None"]


def endpoint_port(raycluster: ray_v1.RayCluster | None, name: str, default: int) -> int:
    """A port KubeRay reports in `status.endpoints` (strings), else `default`."""
    status = raycluster.status if raycluster is not None else None
    endpoints = (status.endpoints if status is not None else None) or {}
    try:
        return int(endpoints.get(name) or default)
    except ValueError:
        return default


def never_resolves(uri: str) -> bool:
    """Whether `uri`'s host is under ``.invalid``, which by RFC 6761 never resolves."""
    host = (urlsplit(uri).hostname or "").rstrip(".")
    return host == "invalid" or host.endswith(".invalid")


@dataclass(frozen=True)
class ClusterDashboard:
    """The dashboard of cluster `name` in `namespace`, reached with `client`."""

    client: Client
    namespace: str
    name: str

    def raycluster(self) -> ray_v1.RayCluster | None:
        try:
            found: ray_v1.RayCluster = self.client.get(
                ray_v1.RayCluster, self.name, namespace=self.namespace
            )
        except flarekit.client.NotFound:
            return None
        return found

    def exposed_uri(self, raycluster: ray_v1.RayCluster | None) -> str:
        """The URL a Route, Ingress or HTTPRoute to the head Service gives it;
        `DashboardNotExposed` when none does."""
        return _endpoints.find_dashboard_uri(
            self.client,
            self.namespace,
            head_service_name(raycluster, self.name),
            port=endpoint_port(raycluster, "dashboard", _endpoints.DEFAULT_DASHBOARD_PORT),
        )

    def route(self) -> Route:
        """Where the dashboard is, looked up once for every step that follows."""
        raycluster = self.raycluster()
        try:
            uri: str | None = self.exposed_uri(raycluster)
        except _endpoints.DashboardNotExposed:
            uri = None
        return uri, raycluster

    def client_at(
        self, route: Route, *, timeout: float, retries: int, verify: Verify
    ) -> RayJobClient:
        """A client of the dashboard at `route`'s URL, else through the API server's proxy."""
        uri, raycluster = route
        if uri is None:
            return _endpoints.through_api_server(
                self.client,
                self.namespace,
                head_service_name(raycluster, self.name),
                endpoint_port(raycluster, "dashboard", _endpoints.DEFAULT_DASHBOARD_PORT),
                timeout=timeout,
                retries=retries,
            )
        return flarekit.ray.RayJobClient(uri, verify=verify, timeout=timeout, retries=retries)

    def answer(
        self, timeout: float, verify: Verify, route: Route | None = None
    ) -> RayJobsError | None:
        """None when the dashboard answers, else the error that says why not (`route`: a
        lookup already made)."""
        try:
            if route is None:
                route = self.route()
        except flarekit.client.NotFound as exc:
            return flarekit.ray.RayJobValidationError("cluster", str(exc))
        uri = route[0]
        if uri is not None and never_resolves(uri):
            return flarekit.ray.RayJobValidationError("address", f"{uri} never resolves")
        try:
            self.client_at(route, timeout=timeout, retries=0, verify=verify).version()
        except flarekit.ray.RayJobsError as exc:
            return exc
        except flarekit.client.NotFound as exc:
            return flarekit.ray.RayJobValidationError("cluster", str(exc))
        return None

    def wait(
        self, timeout: float, poll: float, max_poll: float, progress: bool | Progress, clock: Clock
    ) -> None:
        """Wait until the dashboard answers (`wait_until`'s `WaitTimeout` when it does not in
        `timeout` seconds), unless nothing can ever answer: no proxy to it on this server, or
        a host that never resolves."""
        route = self.route()
        uri = route[0]
        if uri is None:
            answer = self.answer(5.0, True, route)
            if answer is None:
                return
            if isinstance(answer, flarekit.ray.RayJobsApiError) and answer.status == 404:
                return  # no proxy to it on this server: nothing can ever answer there
        elif never_resolves(uri):
            return  # e.g. the practice cluster's hosts: nothing can ever answer there
        where = f"at {uri}" if uri is not None else "through the API server"
        wait_until(
            lambda: self.answer(5.0, True) is None,
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
