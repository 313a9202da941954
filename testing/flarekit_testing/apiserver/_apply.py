"""Server-side apply: field ownership in `metadata.managedFields`, driven by the schema.

Like kube-apiserver's structured-merge-diff, ownership is tracked per field, and the
schema's list and map types say what a field is: maps of named fields and granular maps
are merged key by key; `x-kubernetes-list-type: map` lists are merged item by item (each
item named by its `x-kubernetes-list-map-keys`, `k:{"name":"main"}`, owned through its
`.` marker and its own fields); `set` lists value by value (`v:"a"`); atomic lists and maps
(the default for a CRD's lists) as one value. Every write records which manager set which
fields (`Update` for create/update/patch, `Apply` for apply patches, `subresource: status`
through /status); an apply fails with 409 Conflict when it would change a field another
manager owns, unless `force=true`; applying identical values to another manager's fields
shares their ownership; an apply removes what its manager applied before and no longer
applies, unless another manager owns it too.

Not modelled: client-sent managedFields are ignored, and versions of a field set are not
converted between API versions.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flarekit_testing.apiserver import _errors
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._structural import Schema, compiled

JSON = dict[str, Any]
Path = tuple[str, ...]  # FieldsV1 path elements: "f:name", 'k:{"name":"a"}', 'v:"x"', "."

TRACKED_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")
_METADATA = compiled(
    {
        "type": "object",
        "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "finalizers": {
                "type": "array",
                "items": {"type": "string"},
                "x-kubernetes-list-type": "set",
            },
            "ownerReferences": {
                "type": "array",
                "items": {"type": "object"},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["uid"],
            },
        },
    }
)


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- what a value is, by its schema ------------------------------------------------------------


def _child(s: Schema | None, key: str) -> Schema | None:
    if key == "metadata" and s is not None and "metadata" in s.properties:
        return _METADATA
    return s.child_schema(key) if s is not None else None


def _list_kind(s: Schema | None) -> str:
    return (s.list_type if s is not None else None) or "atomic"


def _atomic_map(s: Schema | None) -> bool:
    return s is not None and s.map_type == "atomic"


def _item_key(item: Any, s: Schema) -> str | None:
    """A list-map item's name, `k:{...}` of its key fields. A key field the item leaves out
    takes the schema's default, as structured-merge-diff does before it merges (so that a
    container port applied without `protocol` is the stored `TCP` port, not a new one)."""
    keys = s.list_map_keys
    if not isinstance(item, dict) or not keys:
        return None
    named = {}
    for k in keys:
        if k in item:
            named[k] = item[k]
            continue
        key_schema = s.items.child_schema(k) if s.items is not None else None
        named[k] = key_schema.default if key_schema is not None else None
    return "k:" + json.dumps(named, separators=(",", ":"))


def _value_key(value: Any) -> str:
    return "v:" + json.dumps(value, separators=(",", ":"))


def leaves(doc: Any, s: Schema | None, prefix: Path = ()) -> dict[Path, Any]:
    """Every owned field under `doc` with its value (list-map items add a `.` marker)."""
    if isinstance(doc, dict) and doc and not _atomic_map(s):
        out: dict[Path, Any] = {}
        for key, value in doc.items():
            out.update(leaves(value, _child(s, key), (*prefix, f"f:{key}")))
        return out
    if isinstance(doc, list) and _list_kind(s) == "map" and s is not None:
        out = {}
        items = s.items
        for item in doc:
            key = _item_key(item, s)
            if key is None:
                return {prefix: doc}
            out[(*prefix, key, ".")] = None
            for name, value in item.items():
                out.update(leaves(value, _child(items, name), (*prefix, key, f"f:{name}")))
        return out
    if isinstance(doc, list) and _list_kind(s) == "set":
        return {(*prefix, _value_key(v)): v for v in doc}
    return {prefix: doc} if prefix else {}


def _value_at(doc: Any, path: Path) -> tuple[bool, Any]:
    for element in path:
        if element == ".":
            return True, None
        if element.startswith("f:"):
            if not isinstance(doc, dict) or element[2:] not in doc:
                return False, None
            doc = doc[element[2:]]
        elif element.startswith("k:"):
            wanted = json.loads(element[2:])
            found = (
                [
                    i
                    for i in doc
                    if isinstance(doc, list)
                    and isinstance(i, dict)
                    and all(i.get(k) == v for k, v in wanted.items())
                ]
                if isinstance(doc, list)
                else []
            )
            if not found:
                return False, None
            doc = found[0]
        else:  # v:
            value = json.loads(element[2:])
            return (isinstance(doc, list) and value in doc), value
    return True, doc


def _remove(doc: Any, path: Path) -> None:
    """Remove the field (or list-map item, for a path ending in `.`) at `path`."""
    if path and path[-1] == ".":
        path = path[:-1]
    if not path:
        return
    found, parent = _value_at(doc, path[:-1])
    if not found:
        return
    last = path[-1]
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif last.startswith("k:") and isinstance(parent, list):
        wanted = json.loads(last[2:])
        parent[:] = [
            i
            for i in parent
            if not (isinstance(i, dict) and all(i.get(k) == v for k, v in wanted.items()))
        ]
    elif last.startswith("v:") and isinstance(parent, list):
        value = json.loads(last[2:])
        parent[:] = [v for v in parent if v != value]


def _prune_empty(doc: Any, path: Path) -> None:
    """Drop maps that a removal left empty along `path` (as apply does for its own fields)."""
    for depth in range(len(path) - 1, 0, -1):
        found, value = _value_at(doc, path[:depth])
        if found and value == {} and path[depth - 1].startswith("f:"):
            _remove(doc, path[:depth])
        else:
            break


def merge(live: Any, config: Any, s: Schema | None) -> Any:
    """`config` merged into `live` the way apply merges: by field, key, item or value."""
    if isinstance(config, dict) and isinstance(live, dict) and not _atomic_map(s):
        out = dict(live)
        for key, value in config.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = merge(out[key], value, _child(s, key))
            else:
                out[key] = copy_json(value)
        return out
    if isinstance(config, list) and isinstance(live, list) and s is not None:
        kind = _list_kind(s)
        if kind == "map":
            merged = [copy_json(i) for i in live]
            for item in config:
                key = _item_key(item, s)
                at = next((n for n, i in enumerate(merged) if _item_key(i, s) == key), None)
                if at is None:
                    merged.append(copy_json(item))
                else:
                    merged[at] = merge(merged[at], item, s.items)
            return merged
        if kind == "set":
            return [*live, *(copy_json(v) for v in config if v not in live)]
    return copy_json(config)


# -- who owns what -------------------------------------------------------------------------


def _overlap(a: Path, b: Path) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


class _Paths:
    """A set of paths that answers "does this path overlap one of you" (one is a prefix of
    the other) in time proportional to the path's depth, not the set's size."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.paths = set(paths)
        self.prefixes = {p[:i] for p in self.paths for i in range(1, len(p) + 1)}

    def overlaps(self, path: Path) -> bool:
        return path in self.prefixes or any(path[:i] in self.paths for i in range(1, len(path)))

    def cover(self, path: Path) -> bool:
        """Whether `path` is one of these or lies under one (a node whose children changed
        is not itself changed)."""
        return any(path[:i] in self.paths for i in range(1, len(path) + 1))


def to_fields_v1(paths: Iterable[Path]) -> JSON:
    """The FieldsV1 tree of a set of paths: a node owned itself and through children too
    has a `.` entry; a node owned only itself is `{}` (an item whose fields other managers
    took, `f:data` of a map whose keys they took)."""
    tree: JSON = {}
    for path in sorted(paths):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return _bare(tree)


def _bare(tree: JSON) -> JSON:
    return {k: {} if v == {".": {}} else _bare(v) for k, v in tree.items()}


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    if not isinstance(tree, dict):
        return set()
    if not tree:
        return {prefix} if prefix else set()
    out: set[Path] = set()
    for key, value in tree.items():
        out |= from_fields_v1(value, (*prefix, key))
    return out


@dataclass
class Entry:
    """One `managedFields` entry."""

    manager: str
    operation: str
    subresource: str
    api_version: str
    time: str
    paths: set[Path] = field(default_factory=set)

    def same_owner(self, manager: str, operation: str, subresource: str) -> bool:
        return (self.manager, self.operation, self.subresource) == (manager, operation, subresource)

    def describe(self) -> str:
        who = f'"{self.manager}"'
        if self.subresource:
            who += f' with subresource "{self.subresource}"'
        if self.operation == "Update":
            who += f" using {self.api_version}"
        return who

    def to_json(self) -> JSON:
        out: JSON = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "fieldsType": "FieldsV1",
            "fieldsV1": to_fields_v1(self.paths),
        }
        if self.time:  # an apply that changed nothing leaves a new manager without one
            out["time"] = self.time
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def read_entries(obj: JSON | None) -> list[Entry]:
    if not obj:
        return []
    out = []
    for raw in (obj.get("metadata") or {}).get("managedFields") or []:
        if not isinstance(raw, dict):
            continue
        out.append(
            Entry(
                manager=str(raw.get("manager", "")),
                operation=str(raw.get("operation", "Update")),
                subresource=str(raw.get("subresource", "")),
                api_version=str(raw.get("apiVersion", "")),
                time=str(raw.get("time", "")),
                paths=from_fields_v1(raw.get("fieldsV1")),
            )
        )
    return out


def ownership(obj: JSON) -> set[tuple[str, str, str, frozenset[Path]]]:
    """Who owns what, without timestamps (to tell a real change from a no-op)."""
    return {(e.manager, e.operation, e.subresource, frozenset(e.paths)) for e in read_entries(obj)}


def _order(e: Entry) -> tuple[str, int, str, str, str]:
    """kube-apiserver's order of managedFields: by operation, then time (to the second; an
    entry without one first), manager, apiVersion and subresource."""
    seconds = 0
    if e.time:
        stamp = datetime.datetime.strptime(e.time, "%Y-%m-%dT%H:%M:%SZ")
        seconds = int(stamp.replace(tzinfo=datetime.UTC).timestamp())
    return e.operation, seconds, e.manager, e.api_version, e.subresource


def write_entries(obj: JSON, entries: list[Entry]) -> None:
    kept = [e.to_json() for e in sorted(entries, key=_order) if e.paths]
    meta = obj.setdefault("metadata", {})
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def _entry(entries: list[Entry], manager: str, operation: str, subresource: str) -> Entry:
    for e in entries:
        if e.same_owner(manager, operation, subresource):
            return e
    e = Entry(manager, operation, subresource, "", "")
    entries.append(e)
    return e


def tracked(obj: JSON, subresource: str, status_subresource: bool) -> JSON:
    """The part of `obj` whose fields a manager can own through this endpoint."""
    if subresource == "status":
        return {"status": obj["status"]} if "status" in obj else {}
    out: JSON = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind", "metadata"):
            continue
        if key == "status" and status_subresource:
            continue
        out[key] = value
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in TRACKED_METADATA if k in meta}
    if kept:
        out["metadata"] = kept
    return out


def _root(schema: Mapping[str, Any] | None) -> Schema | None:
    return compiled(schema) if schema is not None else None


def record_update(
    old: JSON | None,
    new: JSON,
    manager: str,
    api_version: str,
    subresource: str,
    status_subresource: bool,
    schema: Mapping[str, Any] | None = None,
) -> None:
    """Give `manager` the fields this non-apply write changed (taking them from others).

    `old` is the object before the write; for a create, the kind's empty object."""
    s = _root(schema)
    entries = read_entries(old)
    before = leaves(tracked(old, subresource, status_subresource), s) if old else {}
    after = leaves(tracked(new, subresource, status_subresource), s)
    changed = {p for p in before.keys() | after.keys() if before.get(p, ...) != after.get(p, ...)}
    if changed:
        touched = _Paths(changed)
        for e in entries:
            e.paths = {p for p in e.paths if not touched.cover(p[:-1] if p[-1] == "." else p)}
        mine = _entry(entries, manager, "Update", subresource)
        added = {c for c in changed if c in after}
        mine.paths |= added | _new_nodes(added, before)
        mine.api_version, mine.time = api_version, now()
    live = _Paths(leaves(tracked(new, "", False), s))
    for e in entries:
        e.paths = {p for p in e.paths if live.overlaps(p[:-1] if p[-1:] == (".",) else p)}
    write_entries(new, entries)


def _new_nodes(added: set[Path], before: Mapping[Path, Any]) -> set[Path]:
    """The maps and lists an update brought into being, as `.` entries: structured-merge-diff
    gives an update's manager the node itself too (`f:data: {.: {}, f:a: {}}`). What existed
    before does not count: for a create, the fields the kind's empty Go object always has
    (a pod's `spec` and `spec.containers`), and `metadata`."""
    existed = {p[:i] for p in before for i in range(1, len(p) + 1)}
    out: set[Path] = set()
    for path in added:
        for i in range(1, len(path)):
            node = path[:i]
            if node[-1].startswith("f:") and node not in existed and node != ("f:metadata",):
                out.add((*node, "."))
    return out


def apply(
    live: JSON,
    config: JSON,
    manager: str,
    api_version: str,
    force: bool,
    subresource: str,
    status_subresource: bool,
    schema: Mapping[str, Any] | None = None,
) -> JSON:
    """Merge an applied configuration into `live`; 409 on fields owned by other managers."""
    s = _root(schema)
    entries = read_entries(live)
    wanted = tracked(config, subresource, status_subresource)
    wanted_leaves = leaves(wanted, s)
    conflicts: list[tuple[Entry, Path]] = []
    for e in entries:
        if e.same_owner(manager, "Apply", subresource):
            continue
        owned = _Paths(e.paths)
        for path, value in sorted(wanted_leaves.items()):
            if path[-1] == "." or not owned.overlaps(path):
                continue
            exists, current = _value_at(live, path)
            if not exists or current != value:
                conflicts.append((e, path))
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for e, path in conflicts:
        e.paths = {p for p in e.paths if not _overlap(p, path)}

    mine = _entry(entries, manager, "Apply", subresource)
    others_paths = [_Paths(e.paths) for e in entries if e is not mine]
    result: JSON = copy_json(live)
    for path in sorted(mine.paths - set(wanted_leaves), key=len, reverse=True):
        if any(_overlap(path, w) and len(w) > len(path) for w in wanted_leaves):
            continue
        if not any(other.overlaps(path) for other in others_paths):
            _remove(result, path)
            _prune_empty(result, path)
    result = dict(merge(result, wanted, s))
    mine.paths = {p for p, v in wanted_leaves.items() if v is not None or p[-1] == "."}
    mine.api_version = api_version
    if _content(result) != _content(live):  # a no-op apply keeps the time it had, if any
        mine.time = now()
    write_entries(result, entries)
    return result


def _content(obj: JSON) -> JSON:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def _dotted(path: Path) -> str:
    out = ""
    for element in path:
        if element == ".":
            continue
        if element.startswith("f:"):
            out += "." + element[2:]
        elif element.startswith("k:"):
            out += (
                "["
                + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(element[2:]).items())
                + "]"
            )
        else:
            out += f"[{element}]"
    return out


def _conflict_error(conflicts: list[tuple[Entry, Path]]) -> _errors.ApiError:
    causes = [
        _errors.Cause("FieldManagerConflict", f"conflict with {e.describe()}", _dotted(p))
        for e, p in conflicts
    ]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {e.describe()}: {_dotted(p)}"
    else:
        lines: list[str] = []
        for who in sorted({e.describe() for e, _ in conflicts}):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {_dotted(p)}" for e, p in conflicts if e.describe() == who)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return _errors.apply_conflict(message, causes)
