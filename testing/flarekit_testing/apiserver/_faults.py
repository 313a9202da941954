"""Injected failures and delays, and the log of requests the server received.

Retry, backoff and "no request was sent" behaviour can only be tested against a server that
misbehaves on demand and remembers what it was asked. Rules match a request by path prefix (and
optionally method) or by a predicate, fire a bounded number of times, then stop matching.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it. `status` is the HTTP status code it answered."""

    method: str
    path: str
    query: dict[str, list[str]]
    status: int
    user: str | None = None
    content_type: str | None = None
    user_agent: str | None = None  # the client's `User-Agent` header

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None


Predicate = Callable[[RecordedRequest], bool]
ALLOWED_FAULT_STATUSES = (429, 500, 502, 503, 504)


@dataclass
class FaultRule:
    """Answer matching requests with `status` (and a Retry-After header), `times` times.

    `match` is a path prefix such as `/apis/ray.io/v1/namespaces/default/rayclusters` or a
    predicate over the incoming request (whose `status` is 0 at that point). `times=None`
    fires forever; `hits` counts how often the rule fired.
    """

    match: str | Predicate
    status: int = 500
    times: int | None = 1
    retry_after: float | None = None
    method: str | None = None
    delay: float = 0.0
    hits: int = 0

    def __post_init__(self) -> None:
        if self.delay == 0.0 and self.status not in ALLOWED_FAULT_STATUSES:
            allowed = ", ".join(str(s) for s in ALLOWED_FAULT_STATUSES)
            raise ValueError(f"status must be one of {allowed}, got {self.status}")
        if self.times is not None and self.times < 1:
            raise ValueError(f"times must be a positive number or None, got {self.times}")
        if self.method is not None:
            self.method = self.method.upper()

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times

    def matches(self, request: RecordedRequest) -> bool:
        if self.exhausted or (self.method and request.method != self.method):
            return False
        if isinstance(self.match, str):
            return request.path.startswith(self.match)
        return bool(self.match(request))


@dataclass
class Faults:
    """The active fault and delay rules; the HTTP layer asks it before handling each request."""

    _rules: list[FaultRule] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def take(self, request: RecordedRequest) -> tuple[float, FaultRule | None]:
        """Seconds to wait, and the failure to answer with (None: handle normally)."""
        delay, failure = 0.0, None
        with self._lock:
            for rule in self._rules:
                if not rule.matches(request):
                    continue
                if rule.delay:
                    rule.hits += 1
                    delay += rule.delay
                elif failure is None:
                    rule.hits += 1
                    failure = rule
        return delay, failure


@dataclass
class RequestLog:
    """Every request the server answered, in order."""

    _entries: list[RecordedRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, entry: RecordedRequest) -> None:
        with self._lock:
            self._entries.append(entry)

    def snapshot(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
