"""Which pinned upstream release a cluster's CRDs come from, by their schemas.

Why: discovery says which group versions a cluster serves, not which release of the operator
installed them, and fields come and go between releases within one version. The CRDs
themselves do say: a release's CRDs, without their descriptions (which change wording
between releases that change nothing else), are what the pinned compact CRDs hold. So the
served CRDs are compared with each pinned release's: equal schemas are an exact match; else
the release whose schema paths overlap most is the closest, and is reported as such.
Two releases with identical schemas (AppWrapper v1.0.7 and v1.2.1) cannot be told apart and
are both reported.

What it costs, and why it is cheap after the first time: a CRD is large (up to megabytes),
and comparing schemas means walking them. So each side is worked out once and reduced to a
fingerprint (a hash of the CRD without descriptions) and a set of field paths:

* the pinned side once per process, lazily, per release (`pinned_fingerprints`; the paths,
  `pinned_signature`, only when a closest match is searched for), under a lock so that
  threads negotiating at once do not repeat it;
* the served side once per distinct answer (`served_crd`), remembered by the hash of the
  bytes the server sent, so a second client of the same server (whose CRDs have not changed)
  neither parses nor walks them again; and the closest-release search once per set of
  fingerprints (`match_release`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from flarekit.compat._families import Family, pinned_crds, tag_order

__all__ = [
    "Match",
    "ServedCrd",
    "analyse",
    "crd_paths",
    "fingerprint",
    "match_release",
    "normalised",
    "pinned_fingerprints",
    "pinned_signature",
    "served_crd",
]

_SCHEMA_KEYS = ("name", "served", "storage", "deprecated", "deprecationWarning", "schema")
#: What negotiation reads of each version besides its schema.
_FLAG_KEYS = ("name", "served", "storage", "deprecated", "deprecationWarning")


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


def fingerprint(crd: Mapping[str, Any]) -> str:
    """A hash of `normalised(crd)`: equal for two CRDs exactly when their releases' schemas
    are equal."""
    text = json.dumps(normalised(crd), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


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


def crd_paths(crd: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """apiVersion -> every field path the CRD's schema declares for that served version
    (``[]`` a list item, ``{}`` a map value, as in the generated field table)."""
    spec = crd.get("spec") or {}
    group = spec.get("group", "")
    out: dict[str, frozenset[str]] = {}
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
        out[f"{group}/{version.get('name')}"] = frozenset(_walk(schema, ""))
    return out


# -- one CRD, worked out once -------------------------------------------------------------------


@dataclass(frozen=True)
class ServedCrd:
    """What negotiation needs of one CRD: its name, a `summary` (the CRD without schemas:
    group, kind and each version's flags, in the CRD's own shape), the `fingerprint` of its
    schemas and the field `paths` it declares per served apiVersion."""

    name: str
    summary: Mapping[str, Any]
    fingerprint: str
    paths: Mapping[str, frozenset[str]]

    @property
    def kind(self) -> str:
        return str(((self.summary.get("spec") or {}).get("names") or {}).get("kind", ""))


def analyse(crd: Mapping[str, Any]) -> ServedCrd:
    """The `ServedCrd` of a CRD object (not remembered; see `served_crd`)."""
    spec = crd.get("spec") or {}
    versions = [
        {k: v[k] for k in _FLAG_KEYS if k in v}
        for v in spec.get("versions") or []
        if isinstance(v, Mapping)
    ]
    name = str((crd.get("metadata") or {}).get("name", ""))
    summary = {
        "metadata": {"name": name},
        "spec": {
            "group": spec.get("group", ""),
            "names": {"kind": (spec.get("names") or {}).get("kind", "")},
            "versions": versions,
        },
    }
    return ServedCrd(name, summary, fingerprint(crd), crd_paths(crd))


_T = TypeVar("_T")


class _Memo:
    """A small thread-safe map that forgets its oldest entries beyond `size`."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any, compute: Callable[[], _T]) -> _T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                found: _T = self._items[key]
                return found
        value = compute()  # outside the lock: at worst two threads both compute it
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


#: Served CRDs by the hash of the bytes the server sent (a few hundred CRDs at most).
_SERVED = _Memo(512)
#: Closest-release searches by family and served fingerprints.
_CLOSEST = _Memo(128)


def served_crd(body: bytes) -> ServedCrd:
    """The `ServedCrd` of a CRD as the server sent it (JSON bytes), remembered by the
    content's hash: the same answer is parsed and analysed once per process.

    Raises `ValueError` when `body` is not a JSON object.
    """

    def compute() -> ServedCrd:
        crd = json.loads(body)
        if not isinstance(crd, dict):
            raise ValueError("a CustomResourceDefinition is a JSON object")
        return analyse(crd)

    found: ServedCrd = _SERVED.get(hashlib.sha256(body).hexdigest(), compute)
    return found


# -- the pinned releases, worked out once -------------------------------------------------------


class _Once:
    """Values computed once per process per key, also when several threads ask at once."""

    def __init__(self) -> None:
        self._values: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, compute: Callable[[], _T]) -> _T:
        try:
            found: _T = self._values[key]
            return found
        except KeyError:
            pass
        with self._lock:
            if key not in self._values:
                self._values[key] = compute()
            value: _T = self._values[key]
            return value


_PINNED_FINGERPRINTS = _Once()
_PINNED_SIGNATURES = _Once()


def pinned_fingerprints(family: str, tag: str) -> Mapping[str, str]:
    """CRD name -> `fingerprint` of the pinned release `tag` of `family` (worked out on
    first use, once per process)."""
    found: Mapping[str, str] = _PINNED_FINGERPRINTS.get(
        (family, tag),
        lambda: {c["metadata"]["name"]: fingerprint(c) for c in pinned_crds(family, tag)},
    )
    return found


def pinned_signature(family: str, tag: str) -> frozenset[str]:
    """Every ``"<crd name> <apiVersion> <path>"`` the pinned release declares (worked out
    only when a closest match is searched for, once per process)."""
    found: frozenset[str] = _PINNED_SIGNATURES.get(
        (family, tag),
        lambda: _signature({c["metadata"]["name"]: crd_paths(c) for c in pinned_crds(family, tag)}),
    )
    return found


def _signature(crds: Mapping[str, Mapping[str, frozenset[str]]]) -> frozenset[str]:
    """The paths of several CRDs (name -> apiVersion -> paths) as one set."""
    return frozenset(
        f"{name} {api_version} {p}"
        for name, by_version in crds.items()
        for api_version, paths in by_version.items()
        for p in paths
    )


# -- matching -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """The pinned tags the CRDs match exactly, or else the closest ones (and how close:
    the share of schema paths in common, 0..1)."""

    exact: tuple[str, ...]
    closest: tuple[str, ...]
    similarity: float


def match_release(family: Family, served: Mapping[str, ServedCrd]) -> Match:
    """Compare the family's served CRDs (by name) with each pinned release's: an exact
    match compares fingerprints; the closest-release search is remembered by them."""
    if not served:
        return Match((), (), 0.0)
    mine = {name: crd.fingerprint for name, crd in served.items()}
    exact = tuple(t for t in family.tags if pinned_fingerprints(family.name, t) == mine)
    if exact:
        return Match(exact, exact, 1.0)
    key = (family.name, tuple(sorted(mine.items())))
    found: Match = _CLOSEST.get(key, lambda: _closest(family, served))
    return found


def _closest(family: Family, served: Mapping[str, ServedCrd]) -> Match:
    signature = _signature({name: crd.paths for name, crd in served.items()})
    scores: dict[str, float] = {}
    for tag in family.tags:
        theirs = pinned_signature(family.name, tag)
        union = signature | theirs
        scores[tag] = len(signature & theirs) / len(union) if union else 0.0
    if not scores:
        return Match((), (), 0.0)
    best = max(scores.values())
    closest = tuple(sorted((t for t, s in scores.items() if s == best), key=tag_order))
    return Match((), closest, best)
