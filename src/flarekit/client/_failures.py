"""Reading a failed answer into the exception it stands for: a `Status` body (or a watch's
ERROR event) becomes the `ApiError` subclass its code and reason name, with its causes and
retry hint; a body that is not a `Status` keeps its text as the message.

Apart from `_errors` because reading a `Status` takes its model: the exceptions themselves
stay plain Python, cheap to import for code that only catches them.
"""

from __future__ import annotations

from pydantic import ValidationError

from flarekit._json import JsonObject
from flarekit.client._codec import StatusBody
from flarekit.client._errors import (
    AlreadyExists,
    ApiError,
    ApiUnavailable,
    Cause,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    Operation,
    ServerError,
    Unauthorized,
)

__all__ = ["error_from_response", "error_from_status", "parse_retry_after"]

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
