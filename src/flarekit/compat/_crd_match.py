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
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from flarekit._json import JsonObject, JsonValue
from flarekit.compat._crd_models import CrdSpec, CrdVersion, CustomResourceDefinition
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

#: What identifies a version besides its schema (the schema is ``schema_``).
_IDENTITY = {"name", "served", "storage", "deprecated", "deprecation_warning", "schema_"}

CrdLike = CustomResourceDefinition | Mapping[str, JsonValue]


def crd_model(crd: CrdLike) -> CustomResourceDefinition:
    """`crd` (a model, or a CRD's JSON) as the model negotiation reads."""
    if isinstance(crd, CustomResourceDefinition):
        return crd
    return CustomResourceDefinition.model_validate(crd)


def _identity(version: CrdVersion) -> JsonValue:
    data = version.model_dump(mode="json", by_alias=True, exclude_unset=True, include=_IDENTITY)
    data.setdefault("deprecated", False)
    return data


def normalised(crd: CrdLike) -> JsonObject:
    """What identifies a CRD's release: its kind, scope and versions (flags and schemas),
    without descriptions or anything the server adds."""
    spec = crd_model(crd).spec
    versions = [_identity(v) for v in sorted(spec.versions, key=lambda v: v.name)]
    return {"kind": spec.names.kind, "scope": spec.scope, "versions": versions}


def fingerprint(crd: CrdLike) -> str:
    """A hash of `normalised(crd)`: equal for two CRDs exactly when their releases' schemas
    are equal."""
    text = json.dumps(normalised(crd), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def crd_paths(crd: CrdLike) -> dict[str, frozenset[str]]:
    """apiVersion -> every field path the CRD's schema declares for that served version
    (``[]`` a list item, ``{}`` a map value, as in the generated field table)."""
    spec = crd_model(crd).spec
    out: dict[str, frozenset[str]] = {}
    for version in spec.versions:
        if not version.served:
            continue
        schema = version.schema_.open_api_v3_schema if version.schema_ else None
        paths = schema.field_paths() if schema is not None else ()
        out[f"{spec.group}/{version.name}"] = frozenset(paths)
    return out


# -- one CRD, worked out once -------------------------------------------------------------------


@dataclass(frozen=True)
class ServedCrd:
    """What negotiation needs of one CRD: its name, a `summary` (the CRD without schemas:
    group, kind and each version's flags), the `fingerprint` of its schemas and the field
    `paths` it declares per served apiVersion."""

    name: str
    summary: CustomResourceDefinition
    fingerprint: str
    paths: Mapping[str, frozenset[str]]

    @property
    def kind(self) -> str:
        return self.summary.kind


def analyse(crd: CrdLike) -> ServedCrd:
    """The `ServedCrd` of a CRD object (not remembered; see `served_crd`)."""
    model = crd_model(crd)
    spec = model.spec
    summary = CustomResourceDefinition(
        metadata=model.metadata,
        spec=CrdSpec(
            group=spec.group,
            names=spec.names,
            versions=[v.model_copy(update={"schema_": None}) for v in spec.versions],
        ),
    )
    return ServedCrd(model.metadata.name, summary, fingerprint(model), crd_paths(model))


_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class _Memo(Generic[_K, _V]):
    """A small thread-safe map that forgets its oldest entries beyond `size`."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[_K, _V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: _K, compute: Callable[[], _V]) -> _V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = compute()  # outside the lock: at worst two threads both compute it
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


#: Served CRDs by the hash of the bytes the server sent (a few hundred CRDs at most).
_SERVED: _Memo[str, ServedCrd] = _Memo(512)
#: Closest-release searches by family and served fingerprints.
_CLOSEST: _Memo[tuple[str, tuple[tuple[str, str], ...]], Match] = _Memo(128)


def served_crd(body: bytes) -> ServedCrd:
    """The `ServedCrd` of a CRD as the server sent it (JSON bytes), remembered by the
    content's hash: the same answer is parsed and analysed once per process.

    Raises `ValueError` when `body` is not a JSON object.
    """

    def compute() -> ServedCrd:
        if not body.lstrip().startswith(b"{"):
            raise ValueError("a CustomResourceDefinition is a JSON object")
        return analyse(CustomResourceDefinition.model_validate_json(body))

    return _SERVED.get(hashlib.sha256(body).hexdigest(), compute)


# -- the pinned releases, worked out once -------------------------------------------------------


class _Once(Generic[_K, _V]):
    """Values computed once per process per key, also when several threads ask at once."""

    def __init__(self) -> None:
        self._values: dict[_K, _V] = {}
        self._lock = threading.Lock()

    def get(self, key: _K, compute: Callable[[], _V]) -> _V:
        try:
            return self._values[key]
        except KeyError:
            pass
        with self._lock:
            if key not in self._values:
                self._values[key] = compute()
            return self._values[key]


_PINNED_FINGERPRINTS: _Once[tuple[str, str], Mapping[str, str]] = _Once()
_PINNED_SIGNATURES: _Once[tuple[str, str], frozenset[str]] = _Once()


def pinned_fingerprints(family: str, tag: str) -> Mapping[str, str]:
    """CRD name -> `fingerprint` of the pinned release `tag` of `family` (worked out on
    first use, once per process)."""
    found: Mapping[str, str] = _PINNED_FINGERPRINTS.get(
        (family, tag),
        lambda: {c.metadata.name: fingerprint(c) for c in pinned_crds(family, tag)},
    )
    return found


def pinned_signature(family: str, tag: str) -> frozenset[str]:
    """Every ``"<crd name> <apiVersion> <path>"`` the pinned release declares (worked out
    only when a closest match is searched for, once per process)."""
    found: frozenset[str] = _PINNED_SIGNATURES.get(
        (family, tag),
        lambda: _signature({c.metadata.name: crd_paths(c) for c in pinned_crds(family, tag)}),
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
