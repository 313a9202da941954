"""What a write would do, before it is made: `Plan`, the result of a server-side dry run.

Why: platform teams review changes before they are made (GitOps, change control). A diff of
what the user wrote against what is stored shows noise the user never set: defaults, fields
operators write, server metadata. The server knows better: a dry-run apply (``dryRun=All``)
runs defaulting and admission webhooks and answers with the object as it would be stored,
including its managedFields. The fields flarekit's field manager owns before (live) and after
(the dry run's answer) are exactly the fields the user states; comparing the two objects on
those fields alone shows what the user's change does and nothing else, as ``kubectl diff``
would show it for those fields.

`Plan` holds one `ObjectChange` per object; ``str(plan)`` is a unified diff in the form
``kubectl diff`` prints, `summary()` the lines ``kubectl apply --dry-run=server`` prints.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from flarekit._json import JsonObject, JsonValue
from flarekit._yaml import dump_yaml

if TYPE_CHECKING:
    from flarekit_models import KubeResource

__all__ = ["Action", "ObjectChange", "Plan", "change_of", "owned_fields", "project"]

Action = Literal["create", "update", "unchanged"]
#: A managedFields ``fieldsV1`` set: ``f:<field>``, ``k:<key JSON>``, ``v:<value JSON>``,
#: ``i:<index>`` and ``.`` (the node itself) keys, each to the set below it.
FieldSet = dict[str, Any]

#: Metadata the server writes on every object; never a default of the user's object.
_SERVER_METADATA = frozenset(
    {"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}
)
#: What the diff's file names say, as kubectl names its two directories.
_LIVE, _MERGED = "live", "merged"


def _merge(a: FieldSet, b: FieldSet) -> FieldSet:
    out = dict(a)
    for key, sub in b.items():
        out[key] = _merge(out[key], sub) if key in out else sub
    return out


def owned_fields(obj: Mapping[str, Any] | None, manager: str) -> FieldSet:
    """The fields `manager` owns in `obj` (every managedFields entry of that manager on the
    object itself, not on its status or scale), as one field set."""
    owned: FieldSet = {}
    meta = (obj or {}).get("metadata") or {}
    for entry in meta.get("managedFields") or []:
        if entry.get("manager") != manager or entry.get("subresource"):
            continue
        owned = _merge(owned, entry.get("fieldsV1") or {})
    return owned


def _matches(element: Any, key: str) -> bool:
    """Whether the list element `element` is the one the field set key `key` names."""
    kind, _, text = key.partition(":")
    if kind == "k":
        wanted = json.loads(text)
        return isinstance(element, Mapping) and all(element.get(k) == v for k, v in wanted.items())
    if kind == "v":
        return bool(element == json.loads(text))
    return False


def _children(fields: FieldSet) -> FieldSet:
    return {k: v for k, v in fields.items() if k != "."}


def project(value: Any, fields: FieldSet) -> Any:
    """The part of `value` that `fields` covers (a leaf of the set: the whole value)."""
    children = _children(fields)
    if not children:
        return copy.deepcopy(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, sub in children.items():
            name = key[2:] if key.startswith("f:") else None
            if name is not None and name in value:
                out[name] = project(value[name], sub)
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        items: list[Any] = []
        for index, element in enumerate(value):
            for key, sub in children.items():
                if key == f"i:{index}" or _matches(element, key):
                    items.append(project(element, sub))
                    break
        return items
    return copy.deepcopy(value)


def _step(key: str) -> str:
    kind, _, text = key.partition(":")
    if kind == "f":
        return f".{text}"
    if kind == "k":
        pairs = json.loads(text)
        return "[" + ",".join(f"{k}={v}" for k, v in pairs.items()) + "]"
    if kind == "v":
        return f"[={text}]"
    return f"[{text}]"


_MISSING = object()


def _lookup(value: Any, key: str) -> Any:
    if value is _MISSING:
        return _MISSING
    if key.startswith("f:"):
        return value.get(key[2:], _MISSING) if isinstance(value, Mapping) else _MISSING
    if isinstance(value, Sequence) and not isinstance(value, str):
        for index, element in enumerate(value):
            if key == f"i:{index}" or _matches(element, key):
                return element
    return _MISSING


def _changed_paths(before: Any, after: Any, fields: FieldSet, path: str) -> Iterator[str]:
    children = _children(fields)
    if not children:
        yield from _leaf_changes(before, after, path)
        return
    for key, sub in children.items():
        yield from _changed_paths(_lookup(before, key), _lookup(after, key), sub, path + _step(key))


def _leaf_changes(before: Any, after: Any, path: str) -> Iterator[str]:
    """The paths at which two values of one owned leaf differ: into objects by key and into
    lists of the same length by index (an atomic list's elements are owned as a whole, but
    naming the element and field that changed is what a reviewer needs)."""
    if before == after:
        return
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in sorted({*before, *after}, key=str):
            yield from _leaf_changes(
                before.get(key, _MISSING), after.get(key, _MISSING), f"{path}.{key}"
            )
        return
    lists = all(isinstance(v, list) for v in (before, after))
    if lists and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _leaf_changes(old, new, f"{path}[{index}]")
        return
    yield path.lstrip(".")


def _flat(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flat(sub, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for index, sub in enumerate(value):
            out.update(_flat(sub, f"{path}[{index}]"))
        return out
    return {path: value}


def _without_server_fields(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    out = copy.deepcopy(dict(obj or {}))
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in _SERVER_METADATA:
            meta.pop(key, None)
    return out


def _yaml(value: Any) -> list[str]:
    if not value:
        return []

    return dump_yaml(value, sort_keys=True).splitlines(keepends=True)


@dataclass(frozen=True)
class ObjectChange:
    """What a write would do to one object, as the server answered a dry run of it.

    `live` is the object as stored now (None: it does not exist), `result` the object as
    the server would store it (defaults and admission webhooks applied). `before` and
    `after` are both cut down to the fields `manager` owns in either; `changed_fields` names
    the leaves that differ (``spec.workerGroupSpecs[groupName=small].replicas``). `defaults`
    are the fields the server set, or set otherwise, that the request did not carry (path ->
    value), leaving out those already stored that way.
    """

    api_version: str
    kind: str
    namespace: str | None
    name: str
    action: Action
    manager: str
    live: JsonObject | None
    result: JsonObject
    before: JsonObject
    after: JsonObject
    changed_fields: tuple[str, ...]
    defaults: dict[str, JsonValue] = field(default_factory=dict)

    @property
    def file_name(self) -> str:
        """The name kubectl diff gives the object: ``<group>.<version>.<Kind>.<ns>.<name>``."""
        group_version = self.api_version.replace("/", ".")
        where = f"{self.namespace}." if self.namespace else ""
        return f"{group_version}.{self.kind}.{where}{self.name}"

    def unified_diff(self) -> str:
        """The owned fields before and after as a unified diff (empty when none changes)."""
        if not self.changed_fields and self.action != "create":
            return ""
        import difflib  # here: only a diff needs it, and importing flarekit imports this module

        before, after = _yaml(self.before), _yaml(self.after)
        body = "".join(
            difflib.unified_diff(
                before, after, f"{_LIVE}/{self.file_name}", f"{_MERGED}/{self.file_name}"
            )
        )
        head = f"diff -u -N {_LIVE}/{self.file_name} {_MERGED}/{self.file_name}\n"
        return head + body if body else ""

    def summary(self) -> str:
        """The line kubectl apply --dry-run=server prints for the object."""
        group = self.api_version.split("/")[0] if "/" in self.api_version else ""
        resource = self.kind.lower() + (f".{group}" if group else "")
        verb = {"create": "created", "update": "configured", "unchanged": "unchanged"}
        return f"{resource}/{self.name} {verb[self.action]} (server dry run)"


@dataclass(frozen=True)
class Plan:
    """The changes a write would make, one `ObjectChange` per object, in the order written.

    ``str(plan)`` is the unified diff of every changed object (``kubectl diff``'s output for
    the fields the user owns); `exit_code` is ``kubectl diff``'s: 0 when nothing changes, 1
    when something does."""

    changes: tuple[ObjectChange, ...]

    @property
    def changed(self) -> bool:
        return any(c.action == "create" or c.changed_fields for c in self.changes)

    @property
    def exit_code(self) -> int:
        return 1 if self.changed else 0

    def summary(self) -> str:
        return "".join(c.summary() + "\n" for c in self.changes)

    def __str__(self) -> str:
        return "".join(c.unified_diff() for c in self.changes)

    def _repr_html_(self) -> str:
        import html

        text = str(self) or "no changes"
        return f"<pre>{html.escape(text)}</pre>"

    def __iter__(self) -> Iterator[ObjectChange]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)


def _defaults(sent: JsonObject, result: JsonObject, live: JsonObject | None) -> dict[str, Any]:
    sent_flat = _flat(_without_server_fields(sent))
    live_flat = _flat(_without_server_fields(live)) if live is not None else {}
    out: dict[str, Any] = {}
    for path, value in _flat(_without_server_fields(result)).items():
        if path in sent_flat and sent_flat[path] == value:
            continue
        if path not in sent_flat and live_flat.get(path, _MISSING) == value:
            continue  # stored that way already: not this write's doing
        out[path] = value
    return out


def change_of(
    sent: KubeResource, live: KubeResource | None, result: KubeResource, manager: str
) -> ObjectChange:
    """The `ObjectChange` of `sent` (what the request carried), `live` (stored before, None
    when absent) and `result` (the dry run's answer), for the fields `manager` owns."""
    sent_json, result_json = sent.to_dict(), result.to_dict()
    live_json = live.to_dict() if live is not None else None
    owned = _merge(owned_fields(live_json, manager), owned_fields(result_json, manager))
    before = project(live_json, owned) if live_json is not None else {}
    after = project(result_json, owned)
    changed = tuple(_changed_paths(live_json or {}, result_json, owned, ""))
    action: Action
    if live_json is None:
        action = "create"
    elif _without_server_fields(live_json) == _without_server_fields(result_json):
        action = "unchanged"
    else:
        action = "update"
    meta = result_json.get("metadata") or {}
    assert isinstance(meta, Mapping)
    namespace = meta.get("namespace")
    return ObjectChange(
        api_version=str(result_json.get("apiVersion") or ""),
        kind=str(result_json.get("kind") or ""),
        namespace=str(namespace) if namespace else None,
        name=str(meta.get("name") or ""),
        action=action,
        manager=manager,
        live=live_json,
        result=result_json,
        before=before if isinstance(before, dict) else {},
        after=after if isinstance(after, dict) else {},
        changed_fields=changed,
        defaults=_defaults(sent_json, result_json, live_json),
    )
