"""The apiserver's `Status` failure bodies, worded as kube-apiserver words them.

Client code branches on `reason`, `code` and `details`, and people read `message`; a fake that
answered with ad-hoc strings would let code pass here and fail against a real cluster. Each
constructor mirrors one of apimachinery's `NewXxx` error helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


def qualified_resource(resource: str, group: str) -> str:
    """`rayclusters.ray.io`, or just `namespaces` for the core group (GroupResource.String)."""
    return f"{resource}.{group}" if group else resource


def qualified_kind(kind: str, group: str) -> str:
    """`RayCluster.ray.io`, or just `Namespace` for the core group (GroupKind.String)."""
    return f"{kind}.{group}" if group else kind


@dataclass(frozen=True)
class Cause:
    """One `details.causes[]` entry: what is wrong (`reason`), where (`field`), and why."""

    reason: str
    message: str
    field: str = ""

    def to_json(self) -> JSON:
        out: JSON = {"reason": self.reason, "message": self.message}
        if self.field:
            out["field"] = self.field
        return out


@dataclass
class ApiError(Exception):
    """A request failure that the HTTP layer turns into a `Status` response."""

    code: int
    reason: str
    message: str
    details: JSON | None = None
    headers: dict[str, str] = field(default_factory=dict)
    list_meta: JSON | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def status(self) -> JSON:
        """The `Status` body a real apiserver would send for this failure."""
        body: JSON = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta or {}),
            "status": "Failure",
            "message": self.message,
            "code": self.code,
        }
        if self.reason:  # a storage failure has none, and kube-apiserver then sends none
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        return body


def _details(name: str = "", group: str = "", kind: str = "", **extra: Any) -> JSON:
    out: JSON = {}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    if kind:
        out["kind"] = kind
    out.update({k: v for k, v in extra.items() if v})
    return out


def not_found(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{qualified_resource(resource, group)} "{name}" not found',
        _details(name, group, resource),
    )


def already_exists(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified_resource(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def conflict(resource: str, group: str, name: str, why: str = OBJECT_MODIFIED) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified_resource(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


def apply_conflict(message: str, causes: Sequence[Cause]) -> ApiError:
    return ApiError(
        409, "Conflict", message, {"causes": [c.to_json() for c in causes]} if causes else None
    )


def invalid_message(kind: str, group: str, name: str, causes: Sequence[Cause]) -> str:
    """The message of a 422: `RayCluster.ray.io "demo" is invalid: spec.x: Required value`,
    several causes aggregated as field.ErrorList does (duplicates dropped)."""
    parts: list[str] = []
    for c in causes:
        text = f"{c.field}: {c.message}" if c.field else c.message
        if text not in parts:
            parts.append(text)
    subject = f'{qualified_kind(kind, group)} "{name}" is invalid'
    if len(parts) == 1:
        return f"{subject}: {parts[0]}"
    if parts:
        return f"{subject}: [{', '.join(parts)}]"
    return subject


def invalid(kind: str, group: str, name: str, causes: Sequence[Cause]) -> ApiError:
    """422 with one cause per field error; the message aggregates them like field.ErrorList."""
    message = invalid_message(kind, group, name, causes)
    details = _details(name, group, kind)
    details["causes"] = [c.to_json() for c in causes]
    return ApiError(422, "Invalid", message, details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message, None)


CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)


def expired(message: str, continue_token: str = "") -> ApiError:
    """410 Gone, reason Expired: a resourceVersion older than the kept history."""
    return ApiError(
        410,
        "Expired",
        message,
        None,
        list_meta={"continue": continue_token} if continue_token else None,
    )


def unsupported_media_type(content_type: str, accepted: Sequence[str]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
        None,
    )


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized", None)


def forbidden(
    resource: str, group: str, name: str, why: str, causes: Sequence[Cause] = ()
) -> ApiError:
    subject = qualified_resource(resource, group)
    if name:
        subject += f' "{name}"'
    details = _details(name, group, resource)
    if causes:
        details["causes"] = [c.to_json() for c in causes]
    return ApiError(403, "Forbidden", f"{subject} is forbidden: {why}", details)


def method_not_allowed() -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        None,
    )


#: Marks a 404 that kube-apiserver answers as plain text, no Status (no handler took the path).
PAGE_NOT_FOUND = "<page not found>"


def page_not_found() -> ApiError:
    """A path no API handler serves, such as a cluster-scoped custom resource under a
    namespace: kube-apiserver's mux answers `404 page not found` in plain text."""
    return ApiError(404, PAGE_NOT_FOUND, "404 page not found")


def generic_not_found() -> ApiError:
    """What the apiserver answers for a path it does not serve at all."""
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


_FAULT_REASONS = {
    429: ("TooManyRequests", "Too many requests, please try again later."),
    500: ("InternalError", "Internal error occurred: injected fault"),
    503: ("ServiceUnavailable", "The server is currently unable to handle the request"),
    504: ("Timeout", "The server was unable to return a response in the time allotted"),
}


def injected(code: int, retry_after: float | None = None) -> ApiError:
    """The Status a real server sends for an overload or internal failure, for fault injection."""
    reason, message = _FAULT_REASONS.get(code, ("Unknown", f"injected fault with HTTP {code}"))
    details: JSON | None = None
    headers: dict[str, str] = {}
    if retry_after is not None:
        seconds = max(0, round(retry_after))
        details = {"retryAfterSeconds": seconds} if seconds else {}
        headers["Retry-After"] = str(seconds)
    return ApiError(code, reason, message, details, headers)
