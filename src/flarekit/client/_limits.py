"""How much the client accepts from a server or a credential plugin, and reading within that.

Why: a client trusts what it is sent. A server (or a proxy in front of one, or something
listening where the kubeconfig points) can answer with a body of gigabytes, a small gzip body
that inflates to gigabytes, a watch line that never ends, or a credential plugin can print
without end or never exit. Each of these must end in one clear error, in seconds and in
bounded memory, not in a `MemoryError` or a hang. `ReadLimits` holds the bounds (every
`Client` has one; the defaults fit every answer a Kubernetes API server gives), and this
module reads within them: bodies are decompressed step by step, never beyond the bound, and
watch streams are split into lines in linear time, refusing a line beyond its bound.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["BodyDecoder", "ReadLimits", "TooLarge", "UnsupportedEncoding", "split_lines"]

MiB = 1024 * 1024


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on what a `Client` reads; pass `Client(limits=ReadLimits(...))` to change them.

    `max_body_bytes` bounds each answer's body after decompression (a list page, an object,
    a log read without following), `max_watch_line_bytes` each event of a watch (one object
    and its envelope). `exec_timeout` is how long an exec credential plugin of a kubeconfig
    may run before it is killed with its process group, and `max_exec_output_bytes` how much
    it may print. The total time of one request is the client's `timeout`.
    """

    max_body_bytes: int = 64 * MiB
    max_watch_line_bytes: int = 16 * MiB
    exec_timeout: float = 60.0
    max_exec_output_bytes: int = 1 * MiB

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_watch_line_bytes", "max_exec_output_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ReadLimits.{name} must be a positive number of bytes")
        if not self.exec_timeout > 0:
            raise ValueError("ReadLimits.exec_timeout must be a positive number of seconds")


def describe_bytes(count: int) -> str:
    """`count` bytes for a message: 64 MiB, 512 KiB, 300 bytes."""
    if count >= MiB and count % MiB == 0:
        return f"{count // MiB} MiB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


class TooLarge(Exception):
    """Something read went beyond its bound; `what` says what, `setting` which bound."""

    def __init__(self, what: str, limit: int, setting: str) -> None:
        self.what = what
        self.limit = limit
        self.setting = setting
        super().__init__(
            f"{what} is larger than {describe_bytes(limit)} (ReadLimits.{setting}); if it is "
            f"expected, raise the bound: Client(limits=ReadLimits({setting}=...))"
        )


class UnsupportedEncoding(Exception):
    """The answer is compressed in a way the client does not read (it never asks for any)."""


class BodyDecoder:
    """Turns the raw bytes of a body into its content, at most `limit` bytes of it (None:
    no bound on the whole, as for a watch, whose lines are bounded instead).

    Gzip and deflate are inflated step by step with `zlib`'s `max_length`, so a small body
    that would inflate to gigabytes stops at the bound having used no more than it. The raw
    bytes received count against the bound too (a body may go on after its compressed data).
    """

    #: The most one step inflates, bound or not.
    STEP = 1 * MiB

    def __init__(self, encoding: str | None, limit: int | None, what: str, setting: str) -> None:
        coding = (encoding or "").strip().lower()
        if coding in ("", "identity"):
            self._inflate: zlib._Decompress | None = None
        elif coding in ("gzip", "x-gzip", "deflate"):
            self._inflate = zlib.decompressobj(wbits=47)  # gzip or zlib header, detected
        else:
            raise UnsupportedEncoding(f"the answer is compressed as {coding[:40]!r}")
        self.limit = limit
        self.total = 0
        self.received = 0
        self._what = what
        self._setting = setting

    def _too_large(self) -> TooLarge:
        assert self.limit is not None
        return TooLarge(self._what, self.limit, self._setting)

    def _count(self, data: bytes) -> bytes:
        self.total += len(data)
        if self.limit is not None and self.total > self.limit:
            raise self._too_large()
        return data

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The content in `data` (raw bytes as received); `TooLarge` beyond the bound."""
        self.received += len(data)
        if self.limit is not None and self.received > self.limit:
            raise self._too_large()
        if self._inflate is None:
            if data:
                yield self._count(data)
            return
        pending = data
        while pending and not self._inflate.eof:  # after the compressed data: not content
            step = self.STEP if self.limit is None else min(self.STEP, self.limit - self.total + 1)
            try:
                out = self._inflate.decompress(pending, step)
            except zlib.error as exc:
                raise UnsupportedEncoding(f"the compressed answer is corrupt ({exc})") from None
            pending = self._inflate.unconsumed_tail
            if out:
                yield self._count(out)

    def finish(self) -> None:
        """Check that compressed content was complete when the body ended."""
        if self._inflate is not None and self.received and not self._inflate.eof:
            raise UnsupportedEncoding("the compressed answer ends before its compressed data")


def split_lines(chunks: Iterable[bytes], limit: int, what: str, setting: str) -> Iterator[bytes]:
    """Complete newline-terminated, non-blank lines of a stream, each at most `limit` bytes
    (`TooLarge` beyond); a partial last line is dropped. Each byte is looked at once, so a
    line of any length costs linear time, not the quadratic time of re-scanning a buffer."""
    buffer = bytearray()
    for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                buffer += chunk[start:]
                if len(buffer) > limit:
                    raise TooLarge(what, limit, setting)
                break
            buffer += chunk[start:end]
            if len(buffer) > limit:
                raise TooLarge(what, limit, setting)
            if buffer.strip():
                yield bytes(buffer)
            buffer.clear()
            start = end + 1
