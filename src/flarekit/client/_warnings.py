"""Server warnings (the `Warning: 299 - "..."` response header) as Python warnings.

The apiserver warns about deprecated API versions, unknown fields dropped under
`fieldValidation=Warn`, and policy hints; `kubectl` prints them. A library should surface
them the Python way, so users can see, filter or escalate them with the `warnings` module.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable, Iterable

__all__ = ["InsecureConnectionWarning", "ServerWarning", "emit", "parse_warning_header"]


class ServerWarning(UserWarning):
    """A warning the Kubernetes API server sent with a response."""


class InsecureConnectionWarning(UserWarning):
    """TLS certificate verification was switched off on request."""


# warn-code SP warn-agent SP quoted-string [SP warn-date]   (RFC 7234, section 5.5)
_WARNING = re.compile(r'\s*(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,|$)')


def parse_warning_header(value: str) -> list[str]:
    """The texts of every `299` warning in one header value (several may be comma-joined)."""
    texts: list[str] = []
    position = 0
    while position < len(value):
        match = _WARNING.match(value, position)
        if match is None:
            break
        if match.group(1) == "299":
            texts.append(re.sub(r"\\(.)", r"\1", match.group(3)))
        position = match.end()
    return texts


def _utf8(value: str) -> str:
    """A header value as the server wrote it: kube-apiserver writes a warning's text in UTF-8
    bytes (an unknown field named in any script), which Python's HTTP client reads as
    Latin-1 characters."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


def _outside_flarekit() -> int:
    """The `stacklevel` of the first caller outside flarekit's private modules, so a warning
    points at the user's line that made the request, however deep the call came from."""
    level, frame = 2, sys._getframe(2)  # 1 would be emit() itself
    while frame.f_back is not None and _private(str(frame.f_globals.get("__name__", ""))):
        frame, level = frame.f_back, level + 1
    return level


def _private(module: str) -> bool:
    """A private module of flarekit (``flarekit.client._transport``, ``flarekit._wait``)."""
    first, *rest = module.split(".")
    return first == "flarekit" and any(part.startswith("_") for part in rest)


def emit(header_values: Iterable[str], hold_back: Callable[[str], bool] | None = None) -> list[str]:
    """Issue one `ServerWarning` per warning text found in the `Warning` headers, except
    those `hold_back` picks (the client reports unknown fields of a write itself); returns
    every text."""
    texts = [text for value in header_values for text in parse_warning_header(_utf8(value))]
    shown = [t for t in texts if hold_back is None or not hold_back(t)]
    if shown:
        level = _outside_flarekit()
        for text in shown:
            warnings.warn(text, ServerWarning, stacklevel=level)
    return texts
