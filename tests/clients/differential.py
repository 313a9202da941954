"""The client differential's core: what an operation's outcome is, how it is masked, and when
two outcomes agree.

Each client (kubectl, the official dynamic client, lightkube, kr8s) gets an adapter that
performs the script's operations the way a user of that client would (`adapters.py`,
`kubectl_adapter.py`); the script (`script.py`) is the same for all. An operation's outcome is
either its result (the objects, lists, tables or events it returned) or the failure the server
answered: HTTP status, `reason`, and the causes' types and fields. Results are compared whole,
with only what the server makes up differently on every run masked (`mask`): uids,
resourceVersions, timestamps (managedFields times included), generated name suffixes,
allocated IP addresses, the ages in tables, and the run's own namespace and names.

An operation agrees only when both outcomes are equal. A client exception (the client itself
failed on what the server sent) is a difference unless both sides raise it and the case is
listed in `test_differential.CLIENT_ERRORS` with its reason.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

JSON = dict[str, Any]


class Failure(Exception):
    """A failed request as the server answered it: HTTP status, the Status reason, and the
    causes as `(type, field)` pairs."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str = "",
        causes: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code, self.reason, self.message = code, reason, message
        self.causes = tuple(sorted(set(causes)))

    @classmethod
    def from_status(cls, status: Any, code: int = 0, message: str = "") -> Failure:
        """From a `Status` body as the server sent it (anything else: code only)."""
        if not isinstance(status, dict):
            return cls(code, "", message)
        details = status.get("details") or {}
        causes = [
            (str(c.get("reason", "")), str(c.get("field", "")))
            for c in details.get("causes") or []
            if isinstance(c, dict)
        ]
        return cls(
            int(status.get("code") or code),
            str(status.get("reason") or ""),
            str(status.get("message") or message),
            causes,
        )


class Unsupported(Exception):
    """The client has no way to do this operation; it is left out of its tally."""


@dataclass(frozen=True)
class Outcome:
    """One operation's result, masked, or the failure the server answered."""

    op: str
    ok: bool | None  # None: the client cannot do it
    code: int = 0
    reason: str = ""
    causes: tuple[tuple[str, str], ...] = ()
    value: str = ""  # canonical JSON of the masked result
    client_error: str = ""  # the exception's type when the client itself failed

    def __str__(self) -> str:
        if self.ok:
            return f"{self.op}: ok {self.value}"
        if self.client_error:
            return f"{self.op}: client raised {self.client_error}"
        causes = " ".join(f"{t}@{f}" for t, f in self.causes)
        return f"{self.op}: {self.code} {self.reason} {causes}".rstrip()

    def to_json(self) -> JSON:
        return {
            "op": self.op,
            "ok": self.ok,
            "code": self.code,
            "reason": self.reason,
            "causes": [list(c) for c in self.causes],
            "value": self.value,
            "client_error": self.client_error,
        }

    @classmethod
    def from_json(cls, raw: JSON) -> Outcome:
        return cls(
            op=raw["op"],
            ok=raw["ok"],
            code=raw["code"],
            reason=raw["reason"],
            causes=tuple((str(t), str(f)) for t, f in raw["causes"]),
            value=raw["value"],
            client_error=raw["client_error"],
        )


class Adapter(Protocol):
    """What the script needs from a client (`kubectl_adapter.Kubectl`, `adapters.*`).

    Each method raises `Failure` for an API error and `Unsupported` for what the client
    cannot express. `delete` returns the server's answer where the client shows it (a Status,
    or the object still terminating). `wait` takes kubectl's `--for` forms
    (`condition=Type`, `jsonpath={.path}=value`, `delete`) and says whether it was met within a
    minute. `watch` returns the events (`type`, `object`) of a watch from `resource_version`
    that the server ends after `seconds`.
    """

    name: str

    def create(self, obj: JSON) -> JSON: ...
    def get(self, api_version: str, kind: str, name: str, namespace: str | None) -> JSON: ...
    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: str = ""
    ) -> list[JSON]: ...
    def replace(self, obj: JSON) -> JSON: ...
    def merge_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON: ...
    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON: ...
    def apply(
        self, obj: JSON, manager: str, force: bool = False, dry_run: bool = False
    ) -> JSON: ...
    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        policy: str | None = None,
    ) -> JSON | None: ...
    def can_i(self, verb: str, resource: str, namespace: str) -> bool: ...
    def client_apply(self, obj: JSON) -> JSON: ...
    def diff(self, obj: JSON, server_side: bool, manager: str = "") -> JSON: ...
    def table(self, api_version: str, kind: str, namespace: str | None, name: str = "") -> JSON: ...
    def explain(self, path: str) -> list[str]: ...
    def set_image(
        self, kind: str, name: str, namespace: str, container: str, image: str
    ) -> None: ...
    def wait(
        self, api_version: str, kind: str, name: str, namespace: str | None, condition: str
    ) -> bool: ...
    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        resource_version: str,
        seconds: int,
        bookmarks: bool = False,
        events: int = 0,
    ) -> list[JSON]: ...
    def watch_table(
        self, api_version: str, kind: str, namespace: str, labels: str, during: Callable[[], Any]
    ) -> JSON: ...
    def close(self) -> None: ...


# -- masking ---------------------------------------------------------------------------------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?")
_IPV4 = re.compile(r"(?<![\w.])\d{1,3}(\.\d{1,3}){3}(?![\w.])")
#: The five characters kube-apiserver appends to a `generateName` (its random alphabet has no
#: vowels and no 0, 1, 3), at the end of a name or before a further dash or dot.
_GENERATED = re.compile(r"-[bcdfghjklmnpqrstvwxz2456789]{5}(?=$|[-.\"/ ])")
#: Values that name one write: different on every run and every server.
_VOLATILE_KEYS = {"uid", "resourceVersion"}
#: Table columns whose cells are ages or times.
_TIME_COLUMNS = {"AGE", "CREATED AT", "LAST SEEN", "FIRST SEEN", "CREATIONTIMESTAMP"}


@dataclass
class Masks:
    """What is the run's own in names: the namespace and the suffix of cluster-scoped names."""

    words: dict[str, str] = field(default_factory=dict)

    def text(self, value: str) -> str:
        value = _UUID.sub("<uid>", value)
        value = _TIME.sub("<time>", value)
        for word, replacement in self.words.items():
            value = value.replace(word, replacement)
        value = _IPV4.sub("<ip>", value)
        return _GENERATED.sub("-<generated>", value)

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict) and set(value) == {"columns", "rows"}:
            return mask_table(value, self)
        if isinstance(value, dict):
            return {self.text(k): self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if key in _VOLATILE_KEYS and value not in (None, ""):
            return f"<{key}>"
        if isinstance(value, str):
            return self.text(value)
        return value


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def mask_table(table: JSON, masks: Masks) -> JSON:
    """Columns as named, cells as shown, the ages and times masked."""
    columns = [str(c) for c in table.get("columns") or []]
    timed = {i for i, c in enumerate(columns) if c.upper() in _TIME_COLUMNS}
    rows = [
        ["<age>" if i in timed else masks.text(str(cell)) for i, cell in enumerate(row)]
        for row in table.get("rows") or []
    ]
    return {**table, "columns": columns, "rows": rows}


# -- agreement -------------------------------------------------------------------------------


def agree(fake: Outcome, real: Outcome, listed_client_error: bool) -> bool:
    """Whether two outcomes of one operation agree (see the module docstring)."""
    if fake.client_error or real.client_error:
        return listed_client_error and fake == real
    return fake == real


def run_step(name: str, step: Callable[[], Any], masks: Masks) -> Outcome:
    """One operation's outcome, masked."""
    try:
        value = step()
    except Unsupported:
        return Outcome(name, None)
    except Failure as failure:
        return Outcome(name, False, failure.code, failure.reason, failure.causes)
    except Exception as exc:  # the client itself failed on what the server sent
        return Outcome(name, False, client_error=type(exc).__name__)
    return Outcome(name, True, value=canonical(masks(value)))


def wait_for(check: Callable[[], Any], timeout: float = 30.0, poll: float = 0.2) -> Any:
    """`check()`'s first truthy result within `timeout` seconds, else its last result."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(poll)
