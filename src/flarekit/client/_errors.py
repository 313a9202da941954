"""The exceptions flarekit raises when the Kubernetes API refuses or cannot answer a request.

Callers branch on *what* went wrong (the object is missing, someone else changed it, the spec
is invalid, the cluster is unreachable), not on HTTP codes or the `kubernetes` package's
`ApiException`; every failure of a client call is one of these classes, carrying the
apiserver's `Status` reason and message and the request it answers (verb, resource, name,
namespace). This module is plain Python so that `import flarekit` stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flarekit._json import JsonObject, JsonValue
from flarekit._products import PRODUCTS

__all__ = [
    "AlreadyExists",
    "ApiError",
    "ApiUnavailable",
    "Cause",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "KubeconfigError",
    "NotFound",
    "NotServed",
    "Operation",
    "ServerError",
    "Unauthorized",
    "not_installed",
    "unavailable",
]


class KubeconfigError(Exception):
    """No usable cluster configuration: a missing kubeconfig, context, token or CA file."""


@dataclass(frozen=True)
class Cause:
    """One entry of a `Status`'s `details.causes`: which field is wrong, and why."""

    field: str
    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


@dataclass(frozen=True)
class Operation:
    """The request an error answers, in Kubernetes terms (`resource` is `plural.group`)."""

    verb: str
    resource: str
    name: str = ""
    namespace: str = ""

    def with_subresource(self, subresource: str) -> Operation:
        """The same request on a subresource (`pods/log`)."""
        return Operation(self.verb, f"{self.resource}/{subresource}", self.name, self.namespace)

    def describe(self) -> str:
        text = f"{self.verb} {self.resource}"
        if self.name:
            text += f' "{self.name}"'
        if self.namespace:
            text += f' in namespace "{self.namespace}"'
        return text


class ApiError(Exception):
    """A Kubernetes API request failed.

    `code` is the HTTP status (None when no answer arrived), `reason` and `message` come from
    the apiserver's `Status` body, `causes` from its `details.causes`, `retry_after` from
    `Retry-After`. `status` is the whole `Status` body as a dict (empty when there was none).
    """

    def __init__(
        self,
        operation: Operation,
        code: int | None,
        reason: str,
        message: str,
        causes: tuple[Cause, ...] = (),
        retry_after: float | None = None,
        status: Mapping[str, JsonValue] | None = None,
    ) -> None:
        self.operation = operation
        self.code = code
        self.reason = reason
        self.message = message
        self.causes = causes
        self.retry_after = retry_after
        self.status: JsonObject = dict(status or {})
        super().__init__(self._text())

    @property
    def verb(self) -> str:
        return self.operation.verb

    @property
    def resource(self) -> str:
        return self.operation.resource

    @property
    def name(self) -> str:
        return self.operation.name

    @property
    def namespace(self) -> str:
        return self.operation.namespace

    def _text(self) -> str:
        answer = f"{self.code} {self.reason}" if self.code is not None else self.reason
        return f"{self.operation.describe()} failed ({answer}): {self.message}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, reason={self.reason!r}, "
            f"verb={self.verb!r}, resource={self.resource!r}, name={self.name!r}, "
            f"namespace={self.namespace!r}, message={self.message!r})"
        )


class NotFound(ApiError):
    """404: the object (or its namespace, or the resource type) does not exist."""


class AlreadyExists(ApiError):
    """409 AlreadyExists: create of a name that is taken."""


class Conflict(ApiError):
    """409 Conflict: a stale resourceVersion or precondition, or a server-side apply conflict
    (then `causes` names the fields and their managers)."""


class Invalid(ApiError):
    """422 Invalid: the object failed validation; `causes` lists each field and why."""


class Forbidden(ApiError):
    """403: authenticated, but not allowed to do this (RBAC), or a protected object."""


class Unauthorized(ApiError):
    """401: the credentials were missing, wrong or expired."""


class Gone(ApiError):
    """410 Gone/Expired: a resourceVersion or continue token older than the server keeps."""


class ServerError(ApiError):
    """5xx: the apiserver failed while handling the request."""


class ApiUnavailable(ApiError):
    """No usable answer: connection or TLS failure, timeout, or the server stayed overloaded
    (429/503) through every retry."""


def unavailable(operation: Operation, reason: str, why: str) -> ApiUnavailable:
    """The exception for a request that got no HTTP answer at all."""
    return ApiUnavailable(operation, None, reason, why)


class NotServed(LookupError):
    """The cluster does not serve an API group (or none of the versions flarekit speaks)."""

    def __init__(self, group: str, message: str, served: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.group = group
        self.served: tuple[str, ...] = tuple(served)


def not_installed(group: str) -> NotServed:
    """`NotServed` for a group the server does not serve at all, naming what to install."""
    product = PRODUCTS.get(group)
    if product is None:
        return NotServed(group, f"the cluster does not serve the {group} API group")
    return NotServed(group, f"{product} is not installed on this cluster (no {group} API group)")
