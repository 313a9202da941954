"""The parts of kinds flarekit does not pin (an OpenShift Route, a Gateway API HTTPRoute and
Gateway) that say where traffic goes, as models.

Why: these kinds are read as generic resources (typed metadata, the rest as the server sent
it); reading the few fields the dashboard lookup needs through small models keeps that code
in attributes, and a value that is not what the kind's schema says reads as absent instead of
failing the lookup. Unknown fields are kept, as in every model. A module of its own so that
defining the classes costs nothing until a dashboard is looked up.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import Field, ValidationError

from flarekit.client import GenericResource
from flarekit_models import KubeModel

__all__ = ["GatewaySpec", "HTTPRouteSpec", "RouteSpec", "RouteStatus", "RouteTarget", "part"]


class RouteTarget(KubeModel):
    """Where a Route sends traffic (a Service, unless said otherwise)."""

    kind: str = "Service"
    name: str | None = None


class RoutePort(KubeModel):
    target_port: int | str | None = Field(None, alias="targetPort")


class RouteTLS(KubeModel):
    termination: str | None = None


class RouteSpec(KubeModel):
    """The parts of an OpenShift Route's spec (route.openshift.io/v1) that say where it leads."""

    host: str | None = None
    path: str | None = None
    port: RoutePort | None = None
    tls: RouteTLS | None = None
    to: RouteTarget | None = None


class RouteIngress(KubeModel):
    host: str | None = None


class RouteStatus(KubeModel):
    ingress: list[RouteIngress] | None = None


class PathMatch(KubeModel):
    value: str | None = None


class RouteMatch(KubeModel):
    path: PathMatch | None = None


class BackendRef(KubeModel):
    group: str = ""
    kind: str = "Service"
    name: str | None = None
    port: int | None = None


class HTTPRouteRule(KubeModel):
    backend_refs: list[BackendRef] | None = Field(None, alias="backendRefs")
    matches: list[RouteMatch] | None = None


class ParentRef(KubeModel):
    kind: str = "Gateway"
    name: str | None = None
    namespace: str | None = None
    section_name: str | None = Field(None, alias="sectionName")


class HTTPRouteSpec(KubeModel):
    """The parts of a Gateway API HTTPRoute's spec (gateway.networking.k8s.io/v1) read here."""

    hostnames: list[str] | None = None
    parent_refs: list[ParentRef] | None = Field(None, alias="parentRefs")
    rules: list[HTTPRouteRule] | None = None


class Listener(KubeModel):
    name: str | None = None
    protocol: str = ""


class GatewaySpec(KubeModel):
    listeners: list[Listener] | None = None


Part = TypeVar("Part", bound=KubeModel)


def part(model: type[Part], obj: GenericResource | None, field: str) -> Part | None:
    """A top-level field of a kind without a generated model, read as `model`; None when it
    is missing or not what the kind's schema says (such an object leads nowhere)."""
    value = obj.field(field) if obj is not None else None
    if not isinstance(value, dict):
        return None
    try:
        return model.model_validate(value)
    except ValidationError:
        return None
