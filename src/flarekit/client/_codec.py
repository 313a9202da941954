"""Request bodies out of models, and response bytes straight into models.

Responses are validated from bytes by the models' own entry points (`model_validate_json`,
and parametrised list/event containers), which keep unknown fields as the models' extras. A
list page is read with `validate_json_lazily`: checked as fully, its objects' models made when
first read, so a page costs about what its JSON costs as dicts, in time and in memory.
Request bodies are dumped by JSON name with only the fields that were set, so nothing the
caller did not say is written to the cluster.
"""

from __future__ import annotations

import gc
import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from flarekit._json import JsonObject, JsonValue
from flarekit_models import KubeModel, KubeResource
from flarekit_models import dump_json as deep_dumps
from flarekit_models import load_json as deep_loads

__all__ = [
    "ResourceList",
    "StatusBody",
    "WatchLine",
    "decode_page",
    "dump",
    "dump_apply",
    "dump_object",
]

R = TypeVar("R", bound=KubeResource)


class Envelope(KubeModel):
    """What carries objects in an answer (a list page, a watch line), read through the
    models' own JSON entry point (`KubeModel.model_validate_json`), so that its objects are
    read exactly as one object alone is: JSON names only (an unknown key spelt like an
    attribute stays an unknown key), free-form values checked, any depth the server takes,
    errors located inside the object. Its own unknown fields are not kept."""

    model_config = ConfigDict(extra="ignore", defer_build=True)


class ListMeta(Envelope):
    resource_version: str = Field("", alias="resourceVersion")
    continue_: str = Field("", alias="continue")
    remaining_item_count: int | None = Field(None, alias="remainingItemCount")


class ResourceList(Envelope, Generic[R]):
    """`<Kind>List`: one page of a list response."""

    metadata: ListMeta = Field(default_factory=lambda: ListMeta())
    items: list[R] | None = None


class StatusCause(BaseModel):
    """One entry of a `Status`'s `details.causes`: which field is wrong, and why."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    field: str | None = None
    reason: str | None = None
    message: str | None = None


class StatusDetails(BaseModel):
    """A `Status`'s `details`: the causes of a refusal, and how long to wait before a retry."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    causes: list[StatusCause] | None = None
    retry_after_seconds: int | None = Field(None, alias="retryAfterSeconds")


class StatusBody(BaseModel):
    """A `Status` object: in an error or delete answer, or a watch `ERROR` event."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    kind: Literal["Status"]
    code: int = 0
    reason: str | None = None
    message: str | None = None
    details: StatusDetails | None = None


class WatchLine(Envelope, Generic[R]):
    """One line of a watch stream: `{"type": ..., "object": ...}`."""

    type: str
    object: R | StatusBody


_pauses = 0  # decodes under way (threads)
_we_disabled = False  # whether the first of them turned the collector off
_pause_lock = threading.Lock()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Keep Python's cyclic garbage collector from running (when it was enabled).

    Why: validating a page allocates several container objects per field of every object,
    and all of them survive. Each allocation burst triggers collections that traverse the
    objects made so far, so the cost per object grows with the page: measured at 10,000
    RayClusters, about 4x the decoding time. The models hold no reference cycles, so there
    is nothing for the collector to find; reference counting frees them as before."""
    global _pauses, _we_disabled
    with _pause_lock:
        _pauses += 1
        if _pauses == 1 and gc.isenabled():
            gc.disable()
            _we_disabled = True
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _we_disabled:
                _we_disabled = False
                gc.enable()


def decode_page(page_model: type[ResourceList[R]], data: bytes) -> ResourceList[R]:
    """One list response, checked in full from bytes; each object's models are made when
    first read (`KubeModel.validate_json_lazily`), so a page of objects costs about what its
    JSON as dicts costs. The collector is paused while the page is read, and the young
    generation it leaves is collected before returning: the next allocation, wherever it
    happens, does not pay for this page."""
    with _collector_paused():
        page = page_model.validate_json_lazily(data)
    if gc.isenabled():
        gc.collect(0)
    return page


@cache
def object_or_status(kind: type[R]) -> TypeAdapter[R | StatusBody]:
    """Validator for answers that are either the object or a `Status` (delete)."""
    return TypeAdapter(kind | StatusBody)  # type: ignore[arg-type]


def dump_object(obj: KubeResource) -> JsonObject:
    """The JSON form of a model: JSON names, only the fields that were set."""
    return obj.model_dump(mode="json", by_alias=True, exclude_unset=True)


def dump(body: KubeResource | Mapping[str, JsonValue] | Sequence[JsonValue]) -> bytes:
    """Serialise a request body (a model, or plain JSON data) to bytes, at any depth the API
    server takes (pydantic's and the standard library's writers stop at a few hundred levels;
    the models' own writer does not)."""
    if isinstance(body, KubeResource):
        return body.to_json().encode()
    return dump_json(body).encode()


def dump_json(value: object, *, sort_keys: bool = False, ascii_only: bool = False) -> str:
    """Compact JSON text of plain data of any depth: the standard library's writer where it
    can follow the nesting, else the models' iterative one (keys then in their own order)."""
    try:
        return json.dumps(
            value, separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=ascii_only
        )
    except RecursionError:
        text = deep_dumps(value)
        return _NON_ASCII.sub(_escape, text) if ascii_only else text


def load_json(data: bytes | str) -> object:
    """JSON text of any depth the API server takes, read."""
    try:
        return json.loads(data)
    except RecursionError:
        return deep_loads(data)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _escape(match: re.Match[str]) -> str:
    """A non-ASCII character as JSON's \\u escape (a surrogate pair beyond the BMP)."""
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def dump_apply(body: KubeResource | Mapping[str, JsonValue] | Sequence[JsonValue]) -> bytes:
    """A server-side apply body: JSON read by the server as YAML.

    Non-ASCII characters are escaped, because a YAML parser takes U+2028/U+2029/U+0085 in a
    string for line breaks and folds the spaces around them; and `metadata.managedFields`
    (present on an object read from the server) is left out, as apply refuses it.
    """
    data = load_json(dump(body))
    if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
        data["metadata"].pop("managedFields", None)
    return dump_json(data, ascii_only=True).encode()
