"""Which pinned upstream release a cluster's CRDs come from, by their schemas.

Why: discovery says which group versions a cluster serves, not which release of the operator
installed them, and fields come and go between releases within one version. The CRDs
themselves do say: a release's CRDs, without their descriptions (which change wording
between releases that change nothing else), are what the pinned compact CRDs hold. So the
served CRDs are compared with each pinned release's: equal schemas are an exact match; else
the release whose schema paths overlap most is the closest, and is reported as such.
Two releases with identical schemas (AppWrapper v1.0.7 and v1.2.1) cannot be told apart and
are both reported.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from flarekit.compat._families import Family, pinned_crds, tag_order

__all__ = ["Match", "crd_paths", "match_release", "normalised"]

_SCHEMA_KEYS = ("name", "served", "storage", "deprecated", "deprecationWarning", "schema")


def _strip(node: Any) -> Any:
    """A schema without its descriptions (a property *named* description is kept)."""
    if isinstance(node, dict):
        return {
            k: _strip(v) for k, v in node.items() if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def normalised(crd: Mapping[str, Any]) -> dict[str, Any]:
    """What identifies a CRD's release: its kind, scope and versions (flags and schemas),
    without descriptions or anything the server adds."""
    spec = crd.get("spec") or {}
    versions = sorted(
        ({k: _strip(v.get(k)) for k in _SCHEMA_KEYS if k in v} for v in spec.get("versions") or []),
        key=lambda v: str(v.get("name")),
    )
    for v in versions:
        v.setdefault("deprecated", False)
    kind = (spec.get("names") or {}).get("kind")
    return {"kind": kind, "scope": spec.get("scope"), "versions": versions}


def _walk(schema: Any, path: str) -> Iterator[str]:
    if not isinstance(schema, Mapping):
        return
    for name, child in (schema.get("properties") or {}).items():
        sub = f"{path}.{name}" if path else str(name)
        yield sub
        yield from _walk(child, sub)
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _walk(items, f"{path}[]")
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from _walk(extra, f"{path}{{}}")


_MEMO: dict[tuple[str, ...], Any] = {}
_MEMO_LOCK = threading.Lock()
_MEMO_SIZE = 256


def _digest(crd: Mapping[str, Any]) -> str:
    """A fingerprint of a CRD's spec: equal specs share the (costly) analysis below."""
    text = json.dumps(crd.get("spec"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _memo(key: tuple[str, ...], compute: Any) -> Any:
    with _MEMO_LOCK:
        if key in _MEMO:
            return _MEMO[key]
    value = compute()
    with _MEMO_LOCK:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = value
    return value


def crd_paths(crd: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """apiVersion -> every field path the CRD's schema declares for that served version
    (``[]`` a list item, ``{}`` a map value, as in the generated field table)."""
    found: dict[str, frozenset[str]] = _memo(("paths", _digest(crd)), lambda: _crd_paths(crd))
    return found


def _crd_paths(crd: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    spec = crd.get("spec") or {}
    group = spec.get("group", "")
    out: dict[str, frozenset[str]] = {}
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
        out[f"{group}/{version.get('name')}"] = frozenset(_walk(schema, ""))
    return out


def _signature(crds: Mapping[str, Mapping[str, Any]]) -> frozenset[str]:
    out: set[str] = set()
    for name, crd in crds.items():
        for api_version, paths in crd_paths(crd).items():
            out.update(f"{name} {api_version} {p}" for p in paths)
    return frozenset(out)


@cache
def _pinned_normalised(name: str, tag: str) -> dict[str, dict[str, Any]]:
    return {c["metadata"]["name"]: normalised(c) for c in pinned_crds(name, tag)}


@cache
def _pinned_signature(name: str, tag: str) -> frozenset[str]:
    return _signature({c["metadata"]["name"]: c for c in pinned_crds(name, tag)})


@dataclass(frozen=True)
class Match:
    """The pinned tags the CRDs match exactly, or else the closest ones (and how close:
    the share of schema paths in common, 0..1)."""

    exact: tuple[str, ...]
    closest: tuple[str, ...]
    similarity: float


def match_release(family: Family, served: Mapping[str, Mapping[str, Any]]) -> Match:
    """Compare the family's served CRDs (by name) with each pinned release's.

    The analysis is remembered by the CRDs' content, so that every new client of one
    cluster does not repeat it."""
    key = ("match", family.name, *sorted(f"{n}={_digest(c)}" for n, c in served.items()))
    found: Match = _memo(key, lambda: _match(family, served))
    return found


def _match(family: Family, served: Mapping[str, Mapping[str, Any]]) -> Match:
    if not served:
        return Match((), (), 0.0)
    mine = {name: normalised(crd) for name, crd in served.items()}
    exact = [t for t in family.tags if _pinned_normalised(family.name, t) == mine]
    if exact:
        return Match(tuple(exact), tuple(exact), 1.0)
    signature = _signature(served)
    scores: dict[str, float] = {}
    for tag in family.tags:
        pinned = _pinned_signature(family.name, tag)
        union = signature | pinned
        scores[tag] = len(signature & pinned) / len(union) if union else 0.0
    if not scores:
        return Match((), (), 0.0)
    best = max(scores.values())
    closest = tuple(sorted((t for t, s in scores.items() if s == best), key=tag_order))
    return Match((), closest, best)
