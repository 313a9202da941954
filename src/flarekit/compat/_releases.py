"""What negotiation found out: per family, the served versions and the upstream release.

These are plain immutable values so that the CLI (``flarekit version``), the facades and
users read the same answer: `FamilyRelease` for one family, `ServerReleases` for all, with
`ServerReleases.table()` as the text a user sees, e.g.::

    Kueue    v1beta2 (served, storage), v1beta1 (deprecated)  release v0.19.2
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from flarekit._json import JsonObject

__all__ = ["FamilyRelease", "How", "ServedVersion", "ServerReleases", "version_priority"]

#: How the release was found: the CRDs matched a pinned release exactly, were closest to
#: one, could not be read (discovery only), or the family is not installed.
How = Literal["crd", "closest", "discovery", "absent"]


def version_priority(name: str) -> tuple[int, int, int, str]:
    """Sort key putting the newest Kubernetes API version first (v2, v1, v1beta2, v1alpha1)."""
    import re

    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", name)
    if not match:
        return (3, 0, 0, name)
    stage = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    return (stage, -int(match.group(1)), -int(match.group(3) or 0), "")


@dataclass(frozen=True)
class ServedVersion:
    """One version of a family's API group. `storage` and `deprecated` are None when not
    known (deprecation is only in the CRDs; storage also shows in discovery)."""

    name: str
    served: bool = True
    storage: bool | None = None
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    kinds: tuple[str, ...] = ()

    def describe(self) -> str:
        """``v1beta2 (served, storage)``, ``v1beta1 (deprecated)``, ``v1 (served)``."""
        if not self.served:
            flags = "not served"
        elif self.deprecated:
            flags = "deprecated, storage" if self.storage else "deprecated"
        elif self.storage:
            flags = "served, storage"
        else:
            flags = "served"
        return f"{self.name} ({flags})"


def _minor(tag: str) -> str:
    return ".".join(tag.split(".")[:2])


@dataclass(frozen=True)
class FamilyRelease:
    """What one family's software on the cluster is.

    `release` is the pinned tag when exactly one matches the served CRDs; `candidates` the
    pinned tags it may be (exact matches, the closest by schema, or those discovery allows).
    `crd_paths` holds, when the CRDs were read, every field path they declare per
    ``"apiVersion Kind"``: the fields this very server keeps.
    """

    family: str
    product: str
    group: str
    how: How
    versions: tuple[ServedVersion, ...] = ()
    release: str | None = None
    candidates: tuple[str, ...] = ()
    note: str = ""
    similarity: float = 0.0
    crd_paths: Mapping[str, frozenset[str]] | None = field(default=None, repr=False)

    @property
    def installed(self) -> bool:
        return self.how != "absent"

    @property
    def exact(self) -> bool:
        """True when the CRDs equal those of the pinned release(s) in `candidates`."""
        return self.how == "crd"

    @property
    def pinned(self) -> tuple[str, ...]:
        """`candidates` as ``family@tag`` (the spelling of the generated field table)."""
        return tuple(f"{self.family}@{t}" for t in self.candidates)

    def release_text(self) -> str:
        """``v0.19.2``; ``v1.0.7 or v1.2.1 (identical schemas)``; ``~v1.4 (closest pinned;
        exact release unknown)``; ``unknown (>= v0.15; ...)``; ``not installed``."""
        if self.how == "absent":
            return "not installed"
        if self.how == "crd":
            if len(self.candidates) == 1:
                return self.candidates[0]
            return f"{' or '.join(self.candidates)} (identical schemas)"
        if self.how == "closest" and self.candidates:
            close = " or ".join(f"~{_minor(t)}" for t in self.candidates)
            return f"{close} (closest pinned; exact release unknown)"
        return f"unknown ({self.note})" if self.note else "unknown"

    def served_versions(self, kind: str | None = None) -> list[str]:
        """Served version names, newest first; those serving `kind` when given."""
        names = [v.name for v in self.versions if v.served and (kind is None or kind in v.kinds)]
        return sorted(names, key=version_priority)

    def newest(self, kind: str | None = None) -> str | None:
        """The newest served version (serving `kind`), preferring versions not deprecated."""
        names = self.served_versions(kind)
        deprecated = {v.name for v in self.versions if v.deprecated}
        fresh = [n for n in names if n not in deprecated]
        chosen = fresh or names
        return chosen[0] if chosen else None

    def versions_text(self) -> str:
        return ", ".join(v.describe() for v in self.versions) or "-"

    def to_dict(self) -> JsonObject:
        return {
            "family": self.family,
            "product": self.product,
            "group": self.group,
            "installed": self.installed,
            "versions": [
                {
                    "name": v.name,
                    "served": v.served,
                    "storage": v.storage,
                    "deprecated": v.deprecated,
                    "deprecationWarning": v.deprecation_warning,
                    "kinds": list(v.kinds),
                }
                for v in self.versions
            ],
            "release": self.release,
            "releaseText": self.release_text(),
            "candidates": list(self.candidates),
            "how": self.how,
            "note": self.note,
        }


class ServerReleases(Mapping[str, FamilyRelease]):
    """Every family's `FamilyRelease`, by family name, in the order they are listed."""

    def __init__(self, server: str, families: Mapping[str, FamilyRelease]) -> None:
        self.server = server
        self._families = dict(families)

    def __getitem__(self, name: str) -> FamilyRelease:
        try:
            return self._families[name]
        except KeyError:
            known = ", ".join(self._families)
            raise KeyError(f"no family {name!r} was negotiated; known: {known}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._families)

    def __len__(self) -> int:
        return len(self._families)

    def __repr__(self) -> str:
        found = ", ".join(f"{n}={f.release_text()!r}" for n, f in self._families.items())
        return f"ServerReleases({self.server!r}: {found})"

    def table(self) -> str:
        """One line per family: product, versions with flags, release (plain text)."""
        rows = [
            (f.product, f.versions_text() if f.installed else "not installed", f)
            for f in self._families.values()
        ]
        first = max((len(r[0]) for r in rows), default=0)
        second = max((len(r[1]) for r in rows if r[2].installed), default=0)
        lines = []
        for product, versions, fam in rows:
            if not fam.installed:
                lines.append(f"{product:<{first}}  {versions}".rstrip())
                continue
            lines.append(f"{product:<{first}}  {versions:<{second}}  release {fam.release_text()}")
        return "\n".join(lines)

    def to_dict(self) -> JsonObject:
        return {"server": self.server, "families": [f.to_dict() for f in self._families.values()]}
