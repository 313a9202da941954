"""HTTP to the Ray dashboard: one JSON request, with TLS, auth headers, retries and error mapping.

Built on the standard library's `http.client` so that talking to a Ray cluster needs neither
Ray nor an extra HTTP package. Every failure leaves as a `RayJobsError`; secrets (the bearer
token and configured header values) never appear in logs, reprs or error messages.

Retries: a request whose connection could not be opened is retried whatever its method,
because nothing reached the server. Once a request was sent, only idempotent ones (GET) are
retried, on a dropped connection, a timeout, or HTTP 502/503/504 from the dashboard or a proxy
in front of it; a POST or DELETE is never repeated behind the caller's back. Those three
statuses mean "nothing is serving behind the proxy" and end as `RayDashboardUnavailable`, like
a refused connection; every other error status is the dashboard's answer (`RayJobsApiError`).
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import socket
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flarekit._json import JsonValue

from flarekit.ray._jobs_errors import (
    RayDashboardUnavailable,
    RayJobNotFound,
    RayJobsApiError,
    RayJobValidationError,
)

logger = logging.getLogger("flarekit.ray")

Verify = bool | str | os.PathLike[str] | ssl.SSLContext

# A proxy or load balancer answers these while the dashboard behind it is down or restarting.
_UNAVAILABLE_STATUSES = frozenset({502, 503, 504})
_MAX_BACKOFF = 5.0
_REDACTED = "<redacted>"
_MESSAGE_LIMIT = 1000
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Exit)(: |$)")


@dataclass(frozen=True)
class _Address:
    scheme: str
    host: str
    port: int
    prefix: str

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.prefix}"


def parse_address(address: object) -> _Address:
    """Split a dashboard address such as ``http://127.0.0.1:8265`` or ``https://host/ray``."""
    if not isinstance(address, str) or not address.strip():
        raise RayJobValidationError(
            "address", "must be the dashboard URL, such as 'http://127.0.0.1:8265'"
        )
    parts = urllib.parse.urlsplit(address.strip())
    if parts.scheme not in ("http", "https"):
        raise RayJobValidationError(
            "address", f"{address!r} must start with http:// or https:// (the dashboard URL)"
        )
    if parts.username is not None or parts.password is not None:
        raise RayJobValidationError(
            "address", "must not contain credentials; pass token= or headers= instead"
        )
    if parts.query or parts.fragment:
        raise RayJobValidationError("address", f"{address!r} must not have a query or fragment")
    try:
        port = parts.port
    except ValueError:
        raise RayJobValidationError("address", f"{address!r} has an invalid port") from None
    if not parts.hostname:
        raise RayJobValidationError("address", f"{address!r} has no host name")
    default_port = 443 if parts.scheme == "https" else 80
    return _Address(parts.scheme, parts.hostname, port or default_port, parts.path.rstrip("/"))


def _ssl_context(verify: Verify) -> ssl.SSLContext:
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is True:
        return ssl.create_default_context()
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if isinstance(verify, str | os.PathLike):
        path = os.fspath(verify)
        if os.path.isdir(path):
            return ssl.create_default_context(capath=path)
        if os.path.isfile(path):
            return ssl.create_default_context(cafile=path)
        raise RayJobValidationError("verify", f"CA bundle {path!r} does not exist")
    raise RayJobValidationError(
        "verify",
        f"must be True, False, a CA bundle path or an ssl.SSLContext, got {type(verify).__name__}",
    )


def server_message(text: str) -> str:
    """The useful part of an error body: Ray answers most failures with a Python traceback,
    whose last line names the exception; other bodies are kept, shortened."""
    text = text.strip()
    if "Traceback (most recent call last)" in text:
        # The job server wraps the job agent's traceback in its own, so the innermost cause
        # is the last "SomeError: ..." line, not necessarily the last line.
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        causes = [line for line in lines if _EXCEPTION_LINE.match(line)]
        text = causes[-1] if causes else lines[-1]
    if len(text) > _MESSAGE_LIMIT:
        text = text[:_MESSAGE_LIMIT] + "..."
    return text or "(empty response body)"


class DashboardTransport:
    """Sends JSON requests to one dashboard and maps every outcome to a value or a RayJobsError."""

    def __init__(
        self,
        address: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        verify: Verify = True,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.address = parse_address(address)
        if token is not None and (not isinstance(token, str) or not token.strip()):
            raise RayJobValidationError("token", "must be a non-empty string or None")
        extra = _check_headers(headers)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise RayJobValidationError(
                "timeout", f"must be a number of seconds > 0, got {timeout!r}"
            )
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise RayJobValidationError("retries", f"must be a whole number >= 0, got {retries!r}")
        if isinstance(backoff, bool) or not isinstance(backoff, int | float) or backoff < 0:
            raise RayJobValidationError(
                "backoff", f"must be a number of seconds >= 0, got {backoff!r}"
            )
        self._context = _ssl_context(verify) if self.address.scheme == "https" else None
        self._headers = {"Accept": "application/json", "User-Agent": "flarekit"}
        self._headers.update(extra)
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self._secrets = sorted(
            {v for v in [token, *extra.values()] if v and len(v) >= 4}, key=len, reverse=True
        )
        self.header_names = sorted(extra)
        self.has_token = token is not None
        self.timeout = float(timeout)
        self.retries = retries
        self.backoff = float(backoff)
        self._sleep = sleep

    def redact(self, text: str) -> str:
        """Replace every configured secret in `text`."""
        for secret in self._secrets:
            text = text.replace(secret, _REDACTED)
        return text

    def request(
        self,
        method: str,
        path: str,
        body: Mapping[str, JsonValue] | None = None,
        *,
        job: str | None = None,
        data: bytes | None = None,
        expect_json: bool = True,
    ) -> JsonValue:
        """Send one request and return its decoded JSON body (the text, without
        `expect_json`).

        `path` is relative to the dashboard address. `job` names the job the path is about, so
        that a 404 becomes `RayJobNotFound` rather than a generic API error. `data` is sent
        as it is (``application/octet-stream``) instead of a JSON `body`; a PUT of it is
        repeated on failure like a GET (it stores the same bytes again).
        """
        payload = data if data is not None else None if body is None else json.dumps(body).encode()
        content = "application/octet-stream" if data is not None else "application/json"
        idempotent = method in ("GET", "PUT")
        attempt = 0
        while True:
            try:
                status, reason, answer, response_headers = self._once(
                    method, path, payload, content
                )
            except _NotConnected as exc:
                error: Exception = exc.error
                retryable = not isinstance(error, ssl.SSLError)
            except (OSError, http.client.HTTPException) as exc:
                error, retryable = exc, idempotent
            else:
                if status not in _UNAVAILABLE_STATUSES:
                    return self._decode(
                        method, path, status, reason, answer, response_headers, job, expect_json
                    )
                text = self.redact(answer.decode("utf-8", errors="replace"))
                error = _UnavailableStatus(status, server_message(text) if text.strip() else reason)
                retryable = idempotent
            if not retryable or attempt >= self.retries:
                raise self._unavailable(error, attempt + 1) from None
            delay = min(self.backoff * (2**attempt), _MAX_BACKOFF)
            attempt += 1
            logger.debug(
                "%s %s failed (%s); retry %d/%d in %.2fs",
                method, path, type(error).__name__, attempt, self.retries, delay,
            )  # fmt: skip
            self._sleep(delay)

    def _once(
        self, method: str, path: str, payload: bytes | None, content: str = "application/json"
    ) -> tuple[int, str, bytes, http.client.HTTPMessage]:
        address = self.address
        conn: http.client.HTTPConnection
        if self._context is not None:
            conn = http.client.HTTPSConnection(
                address.host, address.port, timeout=self.timeout, context=self._context
            )
        else:
            conn = http.client.HTTPConnection(address.host, address.port, timeout=self.timeout)
        try:
            try:
                conn.connect()
            except OSError as exc:
                raise _NotConnected(exc) from exc
            headers = dict(self._headers)
            if payload is not None:
                headers["Content-Type"] = content
            conn.request(method, address.prefix + path, body=payload, headers=headers)
            response = conn.getresponse()
            data = response.read()
            logger.debug("%s %s -> %d", method, path, response.status)
            return response.status, response.reason, data, response.headers
        finally:
            conn.close()

    def _decode(
        self,
        method: str,
        path: str,
        status: int,
        reason: str,
        data: bytes,
        headers: http.client.HTTPMessage,
        job: str | None,
        expect_json: bool = True,
    ) -> JsonValue:
        text = self.redact(data.decode("utf-8", errors="replace"))
        if 200 <= status < 300 and not expect_json:
            return text
        if 200 <= status < 300:
            try:
                decoded: JsonValue = json.loads(text)
            except ValueError:
                kind = headers.get("Content-Type", "no content type")
                raise RayJobsApiError(
                    status,
                    f"expected a JSON answer from the Ray dashboard but got {kind}: "
                    f"{server_message(text)[:200]}",
                    method=method,
                    path=path,
                    body=text,
                ) from None
            return decoded
        if status == 404 and job is not None:
            raise RayJobNotFound(job, server_message(text), method=method, path=path)
        message = server_message(text) if text.strip() else reason or "(empty response body)"
        if 300 <= status < 400:
            location = self.redact(headers.get("Location", "(no location)"))
            message = (
                f"redirected to {location}; check the address, or pass token= if the dashboard "
                "is behind a login proxy"
            )
        elif status in (401, 403):
            message += " (check the token and headers given to RayJobClient)"
        raise RayJobsApiError(status, message, method=method, path=path, body=text)

    def _unavailable(self, error: Exception, attempts: int) -> RayDashboardUnavailable:
        if isinstance(error, _UnavailableStatus):
            tries = f" after {attempts} attempts" if attempts > 1 else ""
            reason = f"HTTP {error.status} ({error.message}){tries}"
        elif isinstance(error, TimeoutError | socket.timeout):
            reason = f"no answer within {self.timeout:g}s"
        elif isinstance(error, ssl.SSLCertVerificationError):
            reason = (
                f"TLS certificate not trusted ({error.verify_message}); pass verify= with the "
                "cluster's CA bundle, or verify=False to skip the check"
            )
        else:
            reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        status = error.status if isinstance(error, _UnavailableStatus) else None
        return RayDashboardUnavailable(str(self.address), self.redact(reason), status=status)


class _NotConnected(Exception):
    """The TCP or TLS connection could not be opened, so nothing was sent."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _UnavailableStatus(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


def _check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise RayJobValidationError("headers", "must be a dict of header name to string value")
    result: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not name or any(c in name for c in ":\r\n "):
            raise RayJobValidationError("headers", f"{name!r} is not a valid header name")
        if not isinstance(value, str) or "\r" in value or "\n" in value:
            raise RayJobValidationError(f"headers[{name!r}]", "must be a single-line string")
        result[name] = value
    return result
