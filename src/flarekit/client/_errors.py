"""The exceptions flarekit raises when the Kubernetes API refuses or cannot answer a request.

Callers branch on *what* went wrong (the object is missing, someone else changed it, the spec
is invalid, the cluster is unreachable), not on HTTP codes or the `kubernetes` package's
`ApiException`; every failure of a client call is one of these classes, carrying the
apiserver's `Status` reason and message and the request it answers (verb, resource, name,
namespace). This module is plain Python so that `import flarekit` stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flarekit._json import JsonObject, JsonValue

if TYPE_CHECKING:
    from flarekit.client._codec import StatusBody

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
    "Operation",
    "ServerError",
    "Unauthorized",
    "error_from_response",
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


_BY_CODE: dict[int, type[ApiError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    410: Gone,
    422: Invalid,
    429: ApiUnavailable,
    503: ApiUnavailable,
}


def _error_class(code: int, reason: str) -> type[ApiError]:
    if code == 409:
        return AlreadyExists if reason == "AlreadyExists" else Conflict
    if code in _BY_CODE:
        return _BY_CODE[code]
    return ServerError if code >= 500 else ApiError


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds form; HTTP dates are ignored)."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None


def error_from_status(
    operation: Operation, code: int, status: StatusBody, retry_after: float | None = None
) -> ApiError:
    """The exception for a `Status` object (from a response body or a watch ERROR event)."""
    reason = status.reason or _DEFAULT_REASONS.get(code, "Unknown")
    message = status.message or f"the server answered HTTP {code}"
    details = status.details
    causes: tuple[Cause, ...] = ()
    if details is not None:
        if retry_after is None and details.retry_after_seconds:
            retry_after = max(0.0, float(details.retry_after_seconds))
        causes = tuple(
            Cause(c.field or "", c.reason or "", c.message or "") for c in details.causes or ()
        )
    body = status.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return _error_class(code, reason)(operation, code, reason, message, causes, retry_after, body)


_DEFAULT_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Gone",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def error_from_response(
    operation: Operation, code: int, body: bytes, retry_after: str | None = None
) -> ApiError:
    """The exception for a non-2xx response; bodies that are not a `Status` keep their text."""
    from pydantic import ValidationError

    from flarekit.client._codec import StatusBody

    after = parse_retry_after(retry_after)
    if body:
        try:
            return error_from_status(operation, code, StatusBody.model_validate_json(body), after)
        except ValidationError:
            pass  # not a Status (a proxy's page, plain text): its text is the message
    text = body[:500].decode("utf-8", "replace").strip()
    reason = _DEFAULT_REASONS.get(code, "Unknown")
    message = text or f"the server answered HTTP {code}"
    status: JsonObject = {"message": text} if text else {}
    return _error_class(code, reason)(operation, code, reason, message, (), after, status)


def unavailable(operation: Operation, reason: str, why: str) -> ApiUnavailable:
    """The exception for a request that got no HTTP answer at all."""
    return ApiUnavailable(operation, None, reason, why)
