"""The errors a `RayJobClient` raises, so callers never see raw socket, TLS or HTTP exceptions.

Every error derives from `RayJobsError`. Messages never contain the bearer token or the values
of headers the caller configured: the client redacts them before an error is built.
"""

from __future__ import annotations


class RayJobsError(Exception):
    """Base class of every error raised by `RayJobClient`."""


class RayJobValidationError(RayJobsError, ValueError):
    """An argument was rejected before any request was sent.

    `field` names the argument (``entrypoint_resources["GPU"]`` for a nested value) so that a
    caller can point at the exact input; the message says what is accepted.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = message


class RayDashboardUnavailable(RayJobsError, ConnectionError):
    """The dashboard could not be reached: refused, reset, timed out, DNS or TLS failure, or a
    proxy in front of it answered 502/503/504.

    Raised after the client's retries for idempotent requests are used up. `address` is the
    dashboard address the client was built with; `status` is the proxy's HTTP status, if any.
    """

    def __init__(self, address: str, message: str, *, status: int | None = None) -> None:
        super().__init__(f"Ray dashboard at {address} is unavailable: {message}")
        self.address = address
        self.reason = message
        self.status = status


class RayJobsApiError(RayJobsError):
    """The dashboard answered with an error status or an unreadable body.

    `status` is the HTTP status code and `message` the server's own explanation (for Ray's
    Python tracebacks, the final exception line). `body` keeps the full, redacted response
    text for debugging.
    """

    def __init__(
        self, status: int, message: str, *, method: str, path: str, body: str = ""
    ) -> None:
        super().__init__(f"{method} {path} failed with HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.method = method
        self.path = path
        self.body = body


class RayJobNotFound(RayJobsApiError, LookupError):
    """The dashboard has no job with the given submission id or job id (HTTP 404)."""

    def __init__(self, submission_id: str, message: str, *, method: str, path: str) -> None:
        super().__init__(404, message, method=method, path=path, body=message)
        self.submission_id = submission_id


class RayJobTimeout(RayJobsError, TimeoutError):
    """`RayJobClient.wait` or `follow_logs` gave up before the job reached a terminal status.

    `last_status` is the status seen on the final poll, so a caller can tell a job that never
    left PENDING (for example, no free resources) from one that is still RUNNING.
    """

    def __init__(self, submission_id: str, timeout: float, last_status: str) -> None:
        super().__init__(
            f"job {submission_id!r} did not finish within {timeout:g}s "
            f"(last status: {last_status}); it keeps running on the cluster, "
            f"call stop({submission_id!r}) to end it"
        )
        self.submission_id = submission_id
        self.timeout = timeout
        self.last_status = last_status
