"""HTTP to the apiserver: auth headers, retries, server warnings, bounds, and errors as exceptions.

The official `ApiClient` supplies everything that makes a connection trustworthy (TLS and CA,
client certificates, proxies, refreshed bearer tokens); this layer sends requests through its
urllib3 pool directly and hands back raw bytes, so responses are validated once, straight into
the models, instead of going through the generated client's own deserializer. It logs method,
URL and status at DEBUG, never headers or bodies, so credentials cannot reach a log.

Nothing a server sends is trusted to be small or quick: each attempt of a request must be
complete within the client's `timeout` (a watchdog cuts it off, see `_attempt`), a body may
not exceed `ReadLimits.max_body_bytes` once decompressed (see `_limits`), and streams are
read through `Response.chunks`, which bounds their decompression and their connection time.
A request whose connection failed while being opened was not sent, so it is sent again at
once, whatever its verb.
"""

from __future__ import annotations

import contextlib
import logging
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flarekit.client import _warnings
from flarekit.client._attempt import Attempt, track_connections, watched
from flarekit.client._config import Credentials
from flarekit.client._errors import ApiError, Operation, Unauthorized, unavailable
from flarekit.client._exec import ExecPluginError
from flarekit.client._failures import error_from_response
from flarekit.client._limits import BodyDecoder, ReadLimits, TooLarge, UnsupportedEncoding
from flarekit.client._retry import RETRY_STATUSES, RetryPolicy

if TYPE_CHECKING:
    import ssl

    from urllib3 import BaseHTTPResponse
    from websocket import WebSocket

__all__ = [
    "JSON_TYPE",
    "NO_READ_TIMEOUT",
    "Query",
    "Response",
    "StreamExpired",
    "Transport",
    "describe",
]

logger = logging.getLogger("flarekit.client")

Query = Sequence[tuple[str, str]]
JSON_TYPE = "application/json"
#: How much of an error answer is read (its `Status`); the rest is not.
ERROR_BODY_BYTES = 1024 * 1024
_CHUNK = 64 * 1024


class StreamExpired(TimeoutError):
    """A stream's connection outlived the time it was given (a watch the server should have
    ended); it was cut off. An `OSError`, like any other lost connection."""


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
    limits: ReadLimits = field(default_factory=ReadLimits)
    #: For a stream: when (monotonic time) its connection is cut off; None: never.
    deadline: float | None = None

    def chunks(self, limit: int | None = None) -> Iterator[bytes]:
        """The body of a streamed answer, decompressed, as it arrives. `limit` bounds the
        whole (None: no bound; a watch bounds its lines instead), `TooLarge` beyond it; a
        connection still open at `deadline` is cut off with `StreamExpired`."""
        decoder = BodyDecoder(
            self.raw.headers.get("Content-Encoding"), limit, "the streamed answer", "max_body_bytes"
        )
        guard = (
            watched(self.deadline, abort=self.raw.shutdown)
            if self.deadline is not None
            else contextlib.nullcontext()
        )
        with guard as attempt:
            try:
                for data in self.raw.stream(_CHUNK, decode_content=False):
                    yield from decoder.feed(data)
            except Exception:
                if isinstance(attempt, Attempt) and attempt.expired:
                    raise StreamExpired("the stream was still open at its deadline") from None
                raise
            if isinstance(attempt, Attempt) and attempt.expired:
                raise StreamExpired("the stream was still open at its deadline")
            decoder.finish()


def _user_agent() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"flarekit/{version('flarekit')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "flarekit"


class Transport:
    """One connection pool to one apiserver, shared by everything a `Client` does."""

    def __init__(
        self,
        credentials: Credentials,
        timeout: float,
        retry: RetryPolicy,
        limits: ReadLimits | None = None,
    ) -> None:
        import urllib3

        self.credentials = credentials
        self.user_agent = _user_agent()
        self.server = str(credentials.configuration.host).rstrip("/")
        self.timeout = timeout
        self.retry = retry
        self.limits = limits or ReadLimits()
        #: Attempts of writes that got no answer: each may still be carried out.
        self.unanswered_writes = 0
        self._urllib3 = urllib3
        self.api_client = self._new_api_client()

    def _new_api_client(self) -> Any:
        from kubernetes import client

        # The official client is kept for what it does well: TLS, proxies and credentials
        # that refresh (OIDC, service-account tokens). Every request is sent here, with
        # flarekit's own User-Agent, so one retry, timeout, warning and error policy covers
        # them all; the ApiClient keeps its own User-Agent, which makes a request sent around
        # this transport visible in a server's log.
        api_client = client.ApiClient(self.credentials.configuration)
        track_connections(api_client.rest_client.pool_manager)
        return api_client

    def close(self) -> None:
        self.api_client.close()
        self.api_client.rest_client.pool_manager.clear()

    def _authenticate(self, operation: Operation) -> None:
        """Run the kubeconfig's exec credential plugin if its credential is missing or
        expired (before the attempt's clock starts: the plugin has its own time limit)."""
        exec_auth = self.credentials.exec_auth
        if exec_auth is None:
            return

        try:
            renewed_certificate = exec_auth.ensure(self.limits)
        except ExecPluginError as exc:
            raise Unauthorized(operation, None, "ExecPluginFailed", str(exc)) from None
        if renewed_certificate:  # the pool holds the certificate files it was made with
            old, self.api_client = self.api_client, self._new_api_client()
            old.close()

    def _headers(self, content_type: str | None, accept: str = JSON_TYPE) -> dict[str, str]:
        headers = dict(self.api_client.default_headers)
        headers["User-Agent"] = self.user_agent
        headers["Accept"] = accept
        if content_type:
            headers["Content-Type"] = content_type
        # Refreshes expiring tokens (OIDC, service accounts) as the client does; an exec
        # plugin's was renewed by `_authenticate` already.
        exec_auth = self.credentials.exec_auth
        with exec_auth.handled() if exec_auth is not None else contextlib.nullcontext():
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

    def _read_body(self, raw: BaseHTTPResponse, limit: int, *, truncate: bool = False) -> bytes:
        """The decompressed body, refused (`TooLarge`) beyond `limit` bytes, or with
        `truncate` cut there (an error answer: its start says what went wrong)."""
        length = raw.headers.get("Content-Length", "")
        if not truncate and length.isdigit() and int(length) > limit:
            raise TooLarge("the answer", limit, "max_body_bytes")  # said before it is sent
        decoder = BodyDecoder(
            raw.headers.get("Content-Encoding"), limit, "the answer", "max_body_bytes"
        )
        parts: list[bytes] = []
        try:
            for data in raw.stream(_CHUNK, decode_content=False):
                parts.extend(decoder.feed(data))
            decoder.finish()
        except TooLarge:
            if not truncate:
                raise
            return b"".join(parts)[:limit]
        return b"".join(parts)

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
        accept: str = JSON_TYPE,
    ) -> Response:
        """Send one request (retrying idempotent ones on 429/503 and lost connections, and
        any request whose connection could not be opened) and return the 2xx answer, or
        raise the matching `ApiError`. Server warnings become `ServerWarning`s, except those
        `hold_back` picks (all are in `Response.warnings`). Each attempt must be answered
        within the client's timeout (a stream: its headers), and a stream's connection is
        cut off `read_timeout` seconds after it was opened (`NO_READ_TIMEOUT`: never)."""
        url = self.url(path, query)
        read: float | None
        if read_timeout is NO_READ_TIMEOUT:
            read = None
        elif isinstance(read_timeout, (int, float)):
            read = float(read_timeout)
        else:
            read = self.timeout
        socket_read = read if stream else min(read or self.timeout, self.timeout)
        timeout = self._urllib3.Timeout(connect=min(self.timeout, 30.0), read=socket_read)
        attempts = self.retry.attempts if idempotent else 1
        attempt = unsent = 0
        reauthenticated = False
        while True:
            attempt += 1
            self._authenticate(operation)
            started = time.monotonic()
            raw: BaseHTTPResponse | None = None
            complete = False
            with watched(started + self.timeout) as tracker:
                try:
                    raw = self.api_client.rest_client.pool_manager.request(
                        method,
                        url,
                        body=body,
                        headers=self._headers(content_type, accept),
                        timeout=timeout,
                        retries=False,
                        preload_content=False,
                        redirect=False,
                        decode_content=False,
                    )
                    status = raw.status
                    if 200 <= status < 300:
                        data = b"" if stream else self._read_body(raw, self.limits.max_body_bytes)
                    else:
                        data = self._read_body(raw, ERROR_BODY_BYTES, truncate=True)
                    complete = True
                except (TooLarge, UnsupportedEncoding) as exc:
                    reason = "ResponseTooLarge" if isinstance(exc, TooLarge) else "BadResponse"
                    raise unavailable(operation, reason, f"{exc}") from None
                except Exception as exc:
                    error = self._failure(operation, method, url, exc, tracker, raw, body)
                    if error is None:  # nothing was sent: send it again, the first time at once
                        unsent += 1
                        if attempt < max(2, self.retry.attempts):
                            if unsent > 1:
                                self.retry.wait(unsent - 1)
                            continue
                        raise unavailable(operation, type(exc).__name__, describe(exc)) from None
                    # A server that answers, but too slowly, is not asked again; a lost
                    # connection (or no answer in time) is, after a wait (or at once).
                    if attempt < attempts and not (tracker.expired and raw is not None):
                        if not tracker.expired:
                            self.retry.wait(attempt)
                        continue
                    raise error from None
                finally:
                    if raw is not None and not complete:
                        _discard(raw)  # never hand a half-read connection back to the pool
            assert raw is not None
            elapsed = (time.monotonic() - started) * 1000
            logger.debug("%s %s -> %d in %.1f ms", method, url, status, elapsed)
            texts = _warnings.emit(raw.headers.getlist("Warning"), hold_back)
            # A connection cut off just as its answer completed is not handed back to the pool.
            release = _discard if tracker.expired else _release
            if 200 <= status < 300:
                if not stream:
                    release(raw)
                deadline = started + read if stream and read is not None else None
                return Response(status, data, raw, tuple(texts), self.limits, deadline)
            release(raw)
            error = error_from_response(operation, status, data, raw.headers.get("Retry-After"))
            if status == 401 and self.credentials.exec_auth is not None and not reauthenticated:
                reauthenticated = True  # the plugin's credential was refused: ask it again
                self.credentials.exec_auth.invalidate()
                attempt -= 1
                continue
            if status in RETRY_STATUSES and attempt < attempts:
                self.retry.wait(attempt, error.retry_after)
                continue
            raise error

    def _failure(
        self,
        operation: Operation,
        method: str,
        url: str,
        exc: Exception,
        tracker: Attempt,
        raw: BaseHTTPResponse | None,
        body: bytes | None,
    ) -> ApiError | None:
        """The error for an attempt that failed without a complete answer; None when its
        connection failed while being opened (nothing was sent). Unexpected errors (bugs)
        are raised as they are."""
        if not tracker.expired and not isinstance(
            exc, (self._urllib3.exceptions.HTTPError, OSError)
        ):
            raise exc
        logger.debug("%s %s -> %s", method, url, type(exc).__name__)
        if tracker.unsent and not tracker.expired and not _untrusted(exc):
            return None
        if body is not None:
            self.unanswered_writes += 1
        if tracker.expired:
            still = "; the server was still sending it" if raw is not None else ""
            return unavailable(
                operation,
                "Timeout",
                f"no complete answer within {self.timeout:g}s (the client's timeout){still}",
            )
        return unavailable(operation, type(exc).__name__, describe(exc))

    def tls_context(self) -> ssl.SSLContext:
        """The API server's TLS as the official client's configuration sets it up: its CA
        (or the system's), its client certificate, and `verify_ssl`."""
        import ssl

        configuration = self.credentials.configuration
        context = (
            ssl.create_default_context(cafile=configuration.ssl_ca_cert)
            if configuration.ssl_ca_cert
            else ssl.create_default_context()
        )
        if not configuration.verify_ssl:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, configuration.key_file)
        return context

    def open_websocket(
        self,
        operation: Operation,
        path: str,
        *,
        query: Query = (),
        subprotocols: Sequence[str] = (),
    ) -> WebSocket:
        """A WebSocket to `path` (a streaming subresource such as ``pods/portforward``), opened
        with the same credentials, TLS and User-Agent as every request; blocking, without a
        read timeout once open (the caller closes it). A refused upgrade is the matching
        `ApiError`, a connection that cannot be made `ApiUnavailable`."""
        import websocket

        self._authenticate(operation)
        url = self.url(path, query)
        scheme, _, rest = url.partition("://")
        ws_url = f"{'wss' if scheme == 'https' else 'ws'}://{rest}"
        headers = self._headers(None)
        headers.pop("Accept", None)
        options: dict[str, Any] = {}
        proxy = self.credentials.configuration.proxy
        if proxy:
            parsed = urllib.parse.urlsplit(proxy)
            options.update(
                http_proxy_host=parsed.hostname, http_proxy_port=parsed.port, proxy_type="http"
            )
        started = time.monotonic()
        try:
            sock = websocket.create_connection(
                ws_url,
                header=[f"{name}: {value}" for name, value in headers.items()],
                subprotocols=list(subprotocols) or None,
                sslopt={"context": self.tls_context()} if scheme == "https" else None,
                timeout=min(self.timeout, 30.0),
                enable_multithread=True,
                skip_utf8_validation=True,
                **options,
            )
        except websocket.WebSocketBadStatusException as exc:
            body = exc.resp_body or b""
            data = body if isinstance(body, bytes) else str(body).encode()
            logger.debug("GET %s -> %d (upgrade refused)", url, exc.status_code)
            raise error_from_response(operation, exc.status_code, data[:ERROR_BODY_BYTES]) from None
        except (websocket.WebSocketException, OSError) as exc:
            logger.debug("GET %s -> %s", url, type(exc).__name__)
            raise unavailable(operation, type(exc).__name__, describe(exc)) from None
        sock.settimeout(None)
        elapsed = (time.monotonic() - started) * 1000
        logger.debug("GET %s -> 101 in %.1f ms", url, elapsed)
        return sock

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


def _release(raw: BaseHTTPResponse) -> None:
    raw.release_conn()


def _discard(raw: BaseHTTPResponse) -> None:
    with contextlib.suppress(Exception):
        raw.close()
    with contextlib.suppress(Exception):
        raw.release_conn()


def _untrusted(exc: BaseException) -> bool:
    """Whether a failure is the server's certificate being refused (sending again is futile)."""
    import ssl

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return True
        reason = getattr(current, "reason", None)
        current = reason if isinstance(reason, BaseException) else current.__context__
    return False
