"""An approximation of server-side apply: field ownership in `metadata.managedFields`.

What is modelled: every write records which manager set which fields (`operation: Update` for
create/update/patch, `operation: Apply` for apply patches, `subresource: status` for writes
through /status); an apply that changes a field another manager owns fails with 409 Conflict
unless `force=true`, which takes ownership; an apply removes fields its manager applied before
and no longer applies, unless someone else also owns them.

What is approximated: ownership is tracked per leaf of nested maps, and every list is treated
as atomic (a real server merges lists by `x-kubernetes-list-type`/`list-map-keys`, and tracks
items). Owned fields are written in FieldsV1 form (`{"f:spec": {"f:replicas": {}}}`) without
list item keys. Client-sent `managedFields` are ignored.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flarekit.testing import _errors

JSON = dict[str, Any]
Path = tuple[str, ...]

TRACKED_METADATA = ("labels", "annotations", "finalizers", "ownerReferences")


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def tracked(obj: JSON, subresource: str, status_subresource: bool) -> JSON:
    """The part of `obj` whose fields a manager can own through this endpoint."""
    if subresource == "status":
        return {"status": copy.deepcopy(obj["status"])} if "status" in obj else {}
    out: JSON = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind", "metadata"):
            continue
        if key == "status" and status_subresource:
            continue
        out[key] = copy.deepcopy(value)
    meta = obj.get("metadata") or {}
    kept = {k: copy.deepcopy(meta[k]) for k in TRACKED_METADATA if k in meta}
    if kept:
        out["metadata"] = kept
    return out


def leaves(doc: Any, prefix: Path = ()) -> dict[Path, Any]:
    """Every leaf under nested maps; lists, scalars and empty maps are leaves."""
    if isinstance(doc, dict) and doc:
        out: dict[Path, Any] = {}
        for key, value in doc.items():
            out.update(leaves(value, (*prefix, key)))
        return out
    return {prefix: doc} if prefix else {}


def _overlap(a: Path, b: Path) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _value_at(doc: Any, path: Path) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return False, None
        doc = doc[key]
    return True, doc


def _delete_at(doc: JSON, path: Path) -> None:
    parents: list[tuple[JSON, str]] = []
    node: Any = doc
    for key in path[:-1]:
        if not isinstance(node, dict) or key not in node:
            return
        parents.append((node, key))
        node = node[key]
    if isinstance(node, dict):
        node.pop(path[-1], None)
    for parent, key in reversed(parents):  # drop maps the removal emptied
        if parent[key] == {}:
            del parent[key]
        else:
            break


def _merge(live: JSON, config: JSON) -> None:
    for key, value in config.items():
        if value is None:
            live.pop(key, None)
        elif isinstance(value, dict) and isinstance(live.get(key), dict) and value:
            _merge(live[key], value)
        else:
            live[key] = copy.deepcopy(value)


def to_fields_v1(paths: Iterable[Path]) -> JSON:
    tree: JSON = {}
    for path in sorted(paths):
        node = tree
        for key in path:
            node = node.setdefault(f"f:{key}", {})
    return tree


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    if not isinstance(tree, dict):
        return set()
    children = {k: v for k, v in tree.items() if k.startswith("f:")}
    if not children:
        return {prefix} if prefix else set()
    out: set[Path] = set()
    for key, value in children.items():
        out |= from_fields_v1(value, (*prefix, key[2:]))
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
            "time": self.time,
            "fieldsType": "FieldsV1",
            "fieldsV1": to_fields_v1(self.paths),
        }
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


def write_entries(obj: JSON, entries: list[Entry]) -> None:
    kept = [e.to_json() for e in entries if e.paths]
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


def record_update(
    old: JSON | None,
    new: JSON,
    manager: str,
    api_version: str,
    subresource: str,
    status_subresource: bool,
) -> None:
    """Give `manager` the fields this non-apply write changed (taking them from others)."""
    entries = read_entries(old)
    before = leaves(tracked(old, subresource, status_subresource)) if old else {}
    after = leaves(tracked(new, subresource, status_subresource))
    changed = {p for p in before.keys() | after.keys() if before.get(p, ...) != after.get(p, ...)}
    if changed:
        for e in entries:
            e.paths = {p for p in e.paths if not any(_overlap(p, c) for c in changed)}
        mine = _entry(entries, manager, "Update", subresource)
        mine.paths |= {c for c in changed if c in after}
        mine.api_version, mine.time = api_version, now()
    live = leaves(tracked(new, "", False))
    for e in entries:
        e.paths = {p for p in e.paths if any(_overlap(p, q) for q in live)}
    write_entries(new, entries)


def apply(
    live: JSON,
    config: JSON,
    manager: str,
    api_version: str,
    force: bool,
    subresource: str,
    status_subresource: bool,
) -> JSON:
    """Merge an applied configuration into `live`; 409 on fields owned by other managers."""
    entries = read_entries(live)
    wanted = tracked(config, subresource, status_subresource)
    wanted_leaves = leaves(wanted)
    conflicts: list[tuple[Entry, Path]] = []
    for e in entries:
        if e.same_owner(manager, "Apply", subresource):
            continue
        for path, value in sorted(wanted_leaves.items()):
            if not any(_overlap(path, q) for q in e.paths):
                continue
            exists, current = _value_at(live, path)
            if not exists or current != value:
                conflicts.append((e, path))
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for e, path in conflicts:
        e.paths = {p for p in e.paths if not _overlap(p, path)}

    result = copy.deepcopy(live)
    mine = _entry(entries, manager, "Apply", subresource)
    others = [e for e in entries if e is not mine]
    for path in mine.paths - set(wanted_leaves):
        if any(_overlap(path, w) for w in wanted_leaves):
            continue
        if not any(any(_overlap(path, q) for q in e.paths) for e in others):
            _delete_at(result, path)
    _merge(result, wanted)
    mine.paths = {p for p, v in wanted_leaves.items() if v is not None}
    mine.api_version, mine.time = api_version, now()
    write_entries(result, entries)
    return result


def _conflict_error(conflicts: list[tuple[Entry, Path]]) -> _errors.ApiError:
    def dotted(path: Path) -> str:
        return "." + ".".join(path)

    causes = [
        _errors.Cause("FieldManagerConflict", f"conflict with {e.describe()}", dotted(p))
        for e, p in conflicts
    ]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {e.describe()}: {dotted(p)}"
    else:
        lines: list[str] = []
        for who in sorted({e.describe() for e, _ in conflicts}):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {dotted(p)}" for e, p in conflicts if e.describe() == who)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return _errors.apply_conflict(message, causes)
