"""HTTP to the apiserver: auth headers, retries, server warnings, and errors as exceptions.

The official `ApiClient` supplies everything that makes a connection trustworthy (TLS and CA,
client certificates, proxies, refreshed bearer tokens); this layer sends requests through its
urllib3 pool directly and hands back raw bytes, so responses are validated once, straight into
the models, instead of going through the generated client's own deserializer. It logs method,
URL and status at DEBUG, never headers or bodies, so credentials cannot reach a log.
"""

from __future__ import annotations

import logging
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flarekit.client import _warnings
from flarekit.client._config import Credentials
from flarekit.client._errors import Operation, error_from_response, unavailable
from flarekit.client._retry import RETRY_STATUSES, RetryPolicy

if TYPE_CHECKING:
    from urllib3 import BaseHTTPResponse

__all__ = ["JSON_TYPE", "NO_READ_TIMEOUT", "Query", "Response", "Transport", "describe"]

logger = logging.getLogger("flarekit.client")

Query = Sequence[tuple[str, str]]
JSON_TYPE = "application/json"


class _NoReadTimeout:
    """Sentinel: a stream that may stay silent for as long as it likes (a followed log)."""

    def __repr__(self) -> str:
        return "NO_READ_TIMEOUT"


NO_READ_TIMEOUT = _NoReadTimeout()


@dataclass(frozen=True)
class Response:
    """A successful answer: status, body bytes, and the urllib3 response (for streaming)."""

    status: int
    data: bytes
    raw: BaseHTTPResponse
    warnings: tuple[str, ...] = ()  # the texts of the server's `Warning` headers


def _user_agent() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"flarekit/{version('flarekit')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "flarekit"


class Transport:
    """One connection pool to one apiserver, shared by everything a `Client` does."""

    def __init__(self, credentials: Credentials, timeout: float, retry: RetryPolicy) -> None:
        import urllib3
        from kubernetes import client

        self.credentials = credentials
        # The official client is kept for what it does well: TLS, proxies and credentials
        # that refresh (exec plugins, OIDC, service-account tokens). Every request is sent
        # here, with flarekit's own User-Agent, so one retry, timeout, warning and error
        # policy covers them all; the ApiClient keeps its own User-Agent, which makes a
        # request sent around this transport visible in a server's log.
        self.api_client = client.ApiClient(credentials.configuration)
        self.user_agent = _user_agent()
        self.server = str(credentials.configuration.host).rstrip("/")
        self.timeout = timeout
        self.retry = retry
        #: Attempts of writes that got no answer: each may still be carried out.
        self.unanswered_writes = 0
        self._urllib3 = urllib3

    def close(self) -> None:
        self.api_client.close()
        self.api_client.rest_client.pool_manager.clear()

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = dict(self.api_client.default_headers)
        headers["User-Agent"] = self.user_agent
        headers["Accept"] = JSON_TYPE
        if content_type:
            headers["Content-Type"] = content_type
        # Refreshes expiring tokens (exec plugins, OIDC, service accounts) as the client does.
        self.api_client.update_params_for_auth(headers, [], ["BearerToken"])
        value = headers.pop("authorization", None)
        if value is not None:
            # The in-cluster loader writes "bearer <token>"; send the scheme as RFC 6750 spells it.
            scheme, _, token = value.partition(" ")
            headers["Authorization"] = f"Bearer {token}" if scheme.lower() == "bearer" else value
        return headers

    def url(self, path: str, query: Query = ()) -> str:
        text = urllib.parse.urlencode(list(query))
        return f"{self.server}{path}?{text}" if text else f"{self.server}{path}"

    def request(
        self,
        operation: Operation,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: bytes | None = None,
        content_type: str | None = None,
        idempotent: bool,
        stream: bool = False,
        read_timeout: float | _NoReadTimeout | None = None,
        hold_back: Callable[[str], bool] | None = None,
    ) -> Response:
        """Send one request (retrying idempotent ones on 429/503 and lost connections) and
        return the 2xx answer, or raise the matching `ApiError`. Server warnings become
        `ServerWarning`s, except those `hold_back` picks (all are in `Response.warnings`).
        `read_timeout` is the client's timeout unless given (`NO_READ_TIMEOUT`: none)."""
        url = self.url(path, query)
        read: float | None
        if read_timeout is NO_READ_TIMEOUT:
            read = None
        elif isinstance(read_timeout, (int, float)):
            read = float(read_timeout)
        else:
            read = self.timeout
        timeout = self._urllib3.Timeout(connect=min(self.timeout, 30.0), read=read)
        attempts = self.retry.attempts if idempotent else 1
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            try:
                raw = self.api_client.rest_client.pool_manager.request(
                    method,
                    url,
                    body=body,
                    headers=self._headers(content_type),
                    timeout=timeout,
                    retries=False,
                    preload_content=False,
                    redirect=False,
                )
                status = raw.status
                data = b"" if stream and 200 <= status < 300 else raw.read()
            except (self._urllib3.exceptions.HTTPError, OSError) as exc:
                logger.debug("%s %s -> %s (attempt %d)", method, url, type(exc).__name__, attempt)
                if body is not None:
                    self.unanswered_writes += 1
                if attempt < attempts:
                    self.retry.wait(attempt)
                    continue
                raise unavailable(operation, type(exc).__name__, describe(exc)) from None
            elapsed = (time.monotonic() - started) * 1000
            logger.debug("%s %s -> %d in %.1f ms", method, url, status, elapsed)
            texts = _warnings.emit(raw.headers.getlist("Warning"), hold_back)
            if 200 <= status < 300:
                if not stream:
                    raw.release_conn()
                return Response(status, data, raw, tuple(texts))
            raw.release_conn()
            error = error_from_response(operation, status, data, raw.headers.get("Retry-After"))
            if status in RETRY_STATUSES and attempt < attempts:
                self.retry.wait(attempt, error.retry_after)
                continue
            raise error

    def send_json(
        self,
        operation: Operation,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: bytes | None = None,
        content_type: str | None = None,
        idempotent: bool,
    ) -> bytes:
        """`request` for an ordinary (non-streaming) call: the body bytes of the answer."""
        return self.request(
            operation,
            method,
            path,
            query=query,
            body=body,
            content_type=content_type,
            idempotent=idempotent,
        ).data


def describe(exc: BaseException) -> str:
    """A short reason for a transport failure, without the urllib3 pool's internals."""
    reason: object = getattr(exc, "reason", None) or exc
    return f"cannot reach the API server: {reason}"
