"""Find out which group versions and which upstream release of each family a cluster runs.

Why: a user's cluster runs whatever its admins installed. Discovery says which versions are
served and which kinds each serves (the client's facts: one aggregated discovery request).
Where the user may read CustomResourceDefinitions, the CRDs say more: which version stores
each kind, deprecations, and by comparing their schemas with the pinned releases' (see
`flarekit.compat._crd_match`), the release itself. Where they may not (``get
customresourcedefinitions`` is cluster-wide and often denied), the answer is inferred from
discovery and says "unknown".

Everything read is kept in the client's facts (`Client.forget()` drops it). `negotiate` and
`family_release` read a family's CRDs; a write asks only discovery (`family_release(...,
crds=False)`) and reads the one CRD of its kind when it sets a field some pinned releases
lack (`with_crd_of`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from flarekit.client import ApiError, Forbidden, NotServed
from flarekit.compat._crd_match import ServedCrd, match_release, served_crd
from flarekit.compat._crd_models import CustomResourceDefinition
from flarekit.compat._families import FAMILIES, Family, family, pinned_crds, served_kinds
from flarekit.compat._releases import FamilyRelease, ServedVersion, ServerReleases

if TYPE_CHECKING:
    from flarekit.client import Client

__all__ = ["family_release", "negotiate", "with_crd_of"]


def negotiate(
    client: Client, families: Iterable[str] | None = None, *, refresh: bool = False
) -> ServerReleases:
    """The served versions and release of every family (or of `families`).

    Raises flarekit's API errors only when discovery itself fails; CRDs that may not be read
    make the answer less exact, not an error. What was read is kept in the client's facts;
    `refresh=True` asks the server again (as `Client.forget()` does for everything)."""
    if refresh:
        client.forget()
    names = [f.name for f in FAMILIES] if families is None else list(families)
    found = {name: family_release(client, name) for name in names}
    return ServerReleases(client.server, found)


def family_release(client: Client, name: str, *, crds: bool = True) -> FamilyRelease:
    """One family's `FamilyRelease`, from the client's facts: discovery, and the family's
    CRDs unless `crds=False` (each read once per client)."""
    return _negotiate(client, family(name), crds)


def _crd_names(fam: Family, kinds: Iterable[str] | None = None) -> list[str]:
    """The names of the family's CRDs (of `kinds` only, when given) in its pinned releases."""
    wanted = None if kinds is None else set(kinds)
    return sorted(
        {
            c.metadata.name
            for t in fam.tags
            for c in pinned_crds(fam.name, t)
            if wanted is None or c.kind in wanted
        }
    )


def _read_crds(client: Client, names: Iterable[str]) -> tuple[dict[str, ServedCrd] | None, str]:
    """(the CRDs `names` on the server by name, or None; why not).

    Each answer is analysed once per distinct content (`served_crd`), so a second client of
    the same server only pays for the reads."""
    found: dict[str, ServedCrd] = {}
    for name in names:
        try:
            body = client.facts.crd(name)
        except Forbidden:
            return None, "CRDs not readable: forbidden"
        except ApiError as exc:
            return None, f"CRDs not readable: {exc}"
        if body is None:
            continue
        try:
            found[name] = served_crd(body)
        except ValueError:
            return None, f"CRDs not readable: the answer for {name} is not a JSON object"
    if not found:
        return None, "CRDs not found"
    return found, ""


def with_crd_of(client: Client, release: FamilyRelease, kind: str) -> FamilyRelease:
    """`release` with the fields the server's CRD of `kind` declares (`crd_paths`), read
    now (one request, once per client); unchanged when that CRD cannot be read."""
    if release.crd_paths is not None or not release.installed:
        return release
    crds, _ = _read_crds(client, _crd_names(family(release.family), [kind]))
    if not crds:
        return release
    paths = {
        f"{api_version} {crd.kind}": declared
        for crd in crds.values()
        for api_version, declared in crd.paths.items()
    }
    return replace(release, crd_paths=paths)


def _storage_hash(group: str, version: str, kind: str) -> str:
    """The apiserver's storageVersionHash of group/version/kind."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def _stored_kinds(client: Client, group: str, version: str) -> set[str] | None:
    """The kinds `version` stores, from its discovery document (None: not readable)."""
    try:
        listed = client.facts.resource_list(group, version)
    except Forbidden:
        return None
    if listed is None:
        return None
    return {
        r.kind
        for r in listed.resources
        if "/" not in r.name and r.storage_version_hash == _storage_hash(group, version, r.kind)
    }


def _versions_from_crds(
    mine: list[str], crds: Iterable[CustomResourceDefinition], kinds: Mapping[str, set[str]]
) -> tuple[ServedVersion, ...]:
    crds = tuple(crds)
    out = []
    for name in mine:
        entries = [v for crd in crds for v in crd.spec.versions if v.name == name]
        warning = next((v.deprecation_warning for v in entries if v.deprecated), None)
        out.append(
            ServedVersion(
                name,
                served=any(v.served for v in entries) or not entries,
                storage=any(v.storage for v in entries),
                deprecated=any(v.deprecated for v in entries),
                deprecation_warning=warning,
                kinds=tuple(sorted(kinds.get(name) or served_kinds(crds).get(name) or ())),
            )
        )
    return tuple(out)


def _hint(fam: Family, served: Iterable[str]) -> str:
    """What discovery alone says of the release, where a version tells."""
    if fam.name == "kueue":
        return ">= v0.15" if "v1beta2" in set(served) else "< v0.15"
    return ""


def _discovery_candidates(fam: Family, kinds: Mapping[str, set[str]]) -> tuple[str, ...]:
    """The pinned tags that serve exactly these versions and kinds."""
    seen = {v: frozenset(k) for v, k in kinds.items()}
    versions_only = all(not k for k in seen.values())  # resource lists not readable
    out = []
    for tag in fam.tags:
        pinned = served_kinds(pinned_crds(fam.name, tag))
        if (set(pinned) == set(seen)) if versions_only else (pinned == seen):
            out.append(tag)
    return tuple(out)


def _negotiate(client: Client, fam: Family, read_crds: bool) -> FamilyRelease:
    base = partial(FamilyRelease, family=fam.name, product=fam.product, group=fam.group)
    try:
        served = client.facts.served_versions(fam.group)
    except NotServed:
        return base(how="absent")
    mine = [v for v in served if fam.versions is None or v in fam.versions]
    if not mine:
        return base(how="absent", note=f"serves {', '.join(served)}")
    kinds = {v: set(client.facts.kinds(fam.group, v)) for v in mine}
    crds, why = _read_crds(client, _crd_names(fam)) if read_crds else (None, "")
    if crds is not None:
        crds = {n: c for n, c in crds.items() if c.summary.serves(set(mine))}
    if crds:
        match = match_release(fam, crds)
        paths = {
            f"{api_version} {crd.kind}": declared
            for crd in crds.values()
            for api_version, declared in crd.paths.items()
        }
        exact = bool(match.exact)
        return base(
            how="crd" if exact else "closest",
            versions=_versions_from_crds(mine, (c.summary for c in crds.values()), kinds),
            release=match.exact[0] if len(match.exact) == 1 else None,
            candidates=match.exact if exact else match.closest,
            similarity=match.similarity,
            crd_paths=paths,
        )
    # Which version stores a kind: aggregated discovery does not say; a full negotiation
    # whose CRDs could not be read asks each version's own document (storageVersionHash).
    stored = {v: _stored_kinds(client, fam.group, v) for v in mine} if read_crds else {}
    versions = tuple(
        ServedVersion(
            v,
            storage=bool(stored[v]) if stored.get(v) is not None and kinds[v] else None,
            kinds=tuple(sorted(kinds[v])),
        )
        for v in mine
    )
    candidates = _discovery_candidates(fam, kinds)
    notes = [n for n in (_hint(fam, mine), why) if n]
    if candidates:
        notes.append(f"discovery matches pinned {', '.join(candidates)}")
    return base(how="discovery", versions=versions, candidates=candidates, note="; ".join(notes))
