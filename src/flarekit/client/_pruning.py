"""Which fields of a write the server did not keep: the request body against the response.

An API server drops what it does not store without failing the request: a CRD's structural
schema prunes fields it does not declare (an older release of the operator, a field added in
a newer one), a lossy conversion webhook loses what the storage version cannot hold, and a
mutating webhook may remove things. The response to a write is the object as stored, so
every field present in the request body and absent from the response was dropped.

Everything else that makes the two differ is not a loss and is ignored here: fields the server
adds (defaults, server-managed metadata), values it normalises (quantities, int-or-string),
`null` values (a deletion in a merge patch, "unset" in a full object), `status` on the main
endpoint of a kind with a status subresource (the server ignores it there by design) and
everything but `status` on that subresource, and, for built-in kinds, empty values Go's
`omitempty` leaves out. List items are matched by their list-map keys where those are known
(`containers` by name, `conditions` by type, ...), else by position.

The functions are pure: no I/O, inputs never modified.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from flarekit._json import JsonValue
from flarekit.client._json_patch import PatchOperation

__all__ = [
    "LIST_KEYS",
    "SERVER_MANAGED_METADATA",
    "Path",
    "Scope",
    "apiserver_path",
    "built_in_group",
    "pruned_by_json_patch",
    "pruned_fields",
    "render_path",
]

Segment = str | int
Path = tuple[Segment, ...]

#: ObjectMeta fields the server sets or may rewrite on every write: never "dropped".
SERVER_MANAGED_METADATA = frozenset(
    {
        "creationTimestamp",
        "deletionGracePeriodSeconds",
        "deletionTimestamp",
        "generation",
        "managedFields",
        "resourceVersion",
        "selfLink",
        "uid",
    }
)

#: List-map keys by the field name of the list (Kubernetes core types and the condition
#: convention); a list whose items all carry these keys, uniquely, is matched by them.
LIST_KEYS: Mapping[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "imagePullSecrets": ("name",),
    "conditions": ("type",),
    "workerGroupSpecs": ("groupName",),
    "replicatedJobs": ("name",),
    "podSets": ("name",),
    "resourceGroups": ("coveredResources",),
    "flavors": ("name",),
}

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


@dataclass(frozen=True)
class Scope:
    """What part of the object a write could change, and how the server stores it.

    ``subresource`` is ``""`` for the main endpoint or ``"status"``; ``status_subresource``
    says whether the kind has one (then the main endpoint ignores ``status``); ``omit_empty``
    is for built-in kinds, which the server round-trips through Go structs that leave out
    empty values (CRD objects are stored as the JSON they are).
    """

    subresource: str = ""
    status_subresource: bool = False
    omit_empty: bool = False
    list_keys: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: LIST_KEYS)

    def top_level(self, key: str) -> bool:
        """Whether a top-level field of the request is written by this endpoint."""
        if key in ("apiVersion", "kind"):
            return False
        if self.subresource == "status":
            return key == "status"
        return not (key == "status" and self.status_subresource)


def render_path(path: Sequence[Segment]) -> str:
    """A JSON path for people: ``spec.template.spec.containers[0].image``; map keys that are
    not plain names in brackets (``metadata.labels[app.kubernetes.io/name]``)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{part}]"
    return out


def apiserver_path(path: Sequence[Segment]) -> str:
    """The same path as the apiserver spells it in ``unknown field "..."`` warnings (every key
    after a dot)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def pruned_fields(sent: JsonValue, returned: JsonValue, scope: Scope = Scope()) -> list[Path]:
    """The paths of fields in ``sent`` (a request body: a full object or a merge patch) that
    ``returned`` (the response) lacks, outermost first: once a field is missing, what was
    inside it is not listed again."""
    if not isinstance(sent, Mapping) or not isinstance(returned, Mapping):
        return []
    out: list[Path] = []
    for key, value in sent.items():
        if not scope.top_level(str(key)):
            continue
        path: Path = (str(key),)
        if key == "metadata":
            _metadata(value, returned.get("metadata"), scope, out)
        elif key not in returned:
            if not _unset(value, scope):
                out.append(path)
        else:
            _compare(value, returned[key], path, scope, out)
    return out


def _metadata(sent: JsonValue, returned: JsonValue, scope: Scope, out: list[Path]) -> None:
    if not isinstance(sent, Mapping):
        return
    stored: Mapping[str, JsonValue] = returned if isinstance(returned, Mapping) else {}
    for key, value in sent.items():
        if key in SERVER_MANAGED_METADATA:
            continue
        path: Path = ("metadata", str(key))
        if key == "name" and "generateName" in sent:
            continue
        if key not in stored:
            if not _unset(value, scope):
                out.append(path)
        else:
            _compare(value, stored[key], path, scope, out)


def _unset(value: object, scope: Scope) -> bool:
    """A value whose absence from the stored object loses nothing."""
    if value is None:
        return True
    if scope.omit_empty:
        return value in ("", 0, False, {}, [])
    return False


def _compare(sent: object, returned: JsonValue, path: Path, scope: Scope, out: list[Path]) -> None:
    if isinstance(sent, Mapping):
        if not isinstance(returned, Mapping):
            return  # a different type is a rewrite, not a loss of fields
        for key, value in sent.items():
            child: Path = (*path, str(key))
            if key not in returned:
                if not _unset(value, scope):
                    out.append(child)
            else:
                _compare(value, returned[key], child, scope, out)
    elif isinstance(sent, list) and isinstance(returned, list):
        name = next((p for p in reversed(path) if isinstance(p, str)), "")
        for index, item, stored in _pair_items(sent, returned, scope.list_keys.get(name)):
            if isinstance(stored, _Missing):
                if not _unset(item, scope):
                    out.append((*path, index))
            else:
                _compare(item, stored, (*path, index), scope, out)


class _Missing:
    """No stored item matches a sent one."""


_MISSING: Final = _Missing()


def _pair_items(
    sent: list[JsonValue], returned: list[JsonValue], keys: tuple[str, ...] | None
) -> Iterable[tuple[int, JsonValue, JsonValue | _Missing]]:
    """(index in sent, sent item, matching stored item or _MISSING)."""
    if keys:
        sent_keys = _keys_of(sent, keys)
        stored_keys = _keys_of(returned, keys)
        if sent_keys is not None and stored_keys is not None:
            by_key: dict[str, JsonValue | _Missing] = dict(zip(stored_keys, returned, strict=True))
            for index, (key, item) in enumerate(zip(sent_keys, sent, strict=True)):
                yield index, item, by_key.get(key, _MISSING)
            return
    for index, item in enumerate(sent):
        yield index, item, returned[index] if index < len(returned) else _MISSING


def _keys_of(items: list[JsonValue], keys: tuple[str, ...]) -> list[str] | None:
    """Each item's list-map key, or None unless every item has one and they are unique."""
    out: list[str] = []
    for item in items:
        if not isinstance(item, Mapping) or any(k not in item for k in keys):
            return None
        out.append(repr(tuple(item[k] for k in keys)))
    return out if len(set(out)) == len(out) else None


def pruned_by_json_patch(
    operations: Sequence[Mapping[str, JsonValue]], returned: JsonValue, scope: Scope = Scope()
) -> list[Path]:
    """The fields a JSON patch (RFC 6902) added or replaced that ``returned`` lacks."""
    out: list[Path] = []
    for item in operations:
        op = PatchOperation.model_validate(item)
        if op.op not in ("add", "replace"):
            continue
        path = _pointer(op.path)
        if not path or not scope.top_level(str(path[0])) or path[-1] == "-":
            continue
        if path[0] == "metadata" and (len(path) < 2 or path[1] in SERVER_MANAGED_METADATA):
            continue
        node, found = _at(returned, path)
        if not found:
            if not _unset(op.value, scope):
                out.append(path)
        else:
            _compare(op.value, node, path, scope, out)
    return out


def _pointer(text: str) -> Path:
    """A JSON pointer's segments (RFC 6901), digits as list indices."""
    if not text.startswith("/"):
        return ()
    parts = [p.replace("~1", "/").replace("~0", "~") for p in text[1:].split("/")]
    return tuple(int(p) if p.isdigit() else p for p in parts)


def _at(doc: JsonValue, path: Path) -> tuple[JsonValue, bool]:
    node = doc
    for part in path:
        if isinstance(node, Mapping) and str(part) in node:
            node = node[str(part)]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return None, False
    return node, True


def built_in_group(group: str) -> bool:
    """Whether an API group is Kubernetes' own (its objects go through Go structs)."""
    return group == "" or "." not in group or group.endswith(".k8s.io")
