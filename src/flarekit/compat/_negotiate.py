"""Find out which group versions and which upstream release of each family a cluster runs.

Why: a user's cluster runs whatever its admins installed. Discovery (``/apis/<group>`` and
``/apis/<group>/<version>``) says which versions are served, which kinds each serves and,
through ``storageVersionHash``, which one stores them. Where the user may read
CustomResourceDefinitions, the CRDs say more: deprecations, and by comparing their schemas
with the pinned releases' (see `flarekit.compat._crd_match`), the release itself. Where they
may not (``get customresourcedefinitions`` is cluster-wide and often denied), the answer is
inferred from discovery and says "unknown".

The answer is kept on the `Client` (`forget_negotiated`, or `Client.forget()`, drops it). Facades ask for the one family they write (`family_release`), so a RayCluster
create reads only KubeRay's CRDs; `negotiate` asks for all of them.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from flarekit.client._discovery import read_document
from flarekit.client._errors import ApiError, Forbidden
from flarekit.client._served import NotServed, get_bytes, served_versions
from flarekit.compat._crd_match import ServedCrd, match_release, served_crd
from flarekit.compat._crd_models import APIResourceList, CustomResourceDefinition
from flarekit.compat._families import FAMILIES, Family, family, pinned_crds, served_kinds
from flarekit.compat._releases import FamilyRelease, ServedVersion, ServerReleases

if TYPE_CHECKING:
    from flarekit.client._client import Client

__all__ = ["family_release", "forget_negotiated", "negotiate"]

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

_TOPIC = "negotiated"


def forget_negotiated(client: Client) -> None:
    """Negotiate again next time (after operators were installed or upgraded)."""
    client.knowledge.clear(_TOPIC)


def negotiate(
    client: Client, families: Iterable[str] | None = None, *, refresh: bool = False
) -> ServerReleases:
    """The served versions and release of every family (or of `families`), cached per client.

    Raises flarekit's API errors only when discovery itself fails; CRDs that may not be read
    make the answer less exact, not an error.
    """
    names = [f.name for f in FAMILIES] if families is None else list(families)
    found = {name: family_release(client, name, refresh=refresh) for name in names}
    return ServerReleases(client.server, found)


def family_release(client: Client, name: str, *, refresh: bool = False) -> FamilyRelease:
    """One family's `FamilyRelease` (negotiated on first use, then cached for `client`)."""
    fam = family(name)
    if not refresh:
        known = client.knowledge.get(_TOPIC, name, FamilyRelease)
        if known is not None:
            return known
    result, final = _negotiate(client, fam)
    if final:
        client.knowledge.put(_TOPIC, name, result)
    return result


def _storage_hash(group: str, version: str, kind: str) -> str:
    """The apiserver's storageVersionHash of group/version/kind."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def _resources(client: Client, group: str, version: str) -> tuple[set[str], set[str]]:
    """(kinds served, kinds stored in `version`) from ``/apis/<group>/<version>``."""
    path = f"/apis/{group}/{version}"
    try:
        body = get_bytes(client, path)
    except Forbidden:
        return set(), set()
    listed = read_document(APIResourceList, path, body) if body is not None else None
    kinds: set[str] = set()
    stored: set[str] = set()
    for entry in listed.resources if listed is not None else ():
        if "/" in entry.name:
            continue
        kinds.add(entry.kind)
        if entry.storage_version_hash == _storage_hash(group, version, entry.kind):
            stored.add(entry.kind)
    return kinds, stored


def _read_crds(client: Client, fam: Family) -> tuple[dict[str, ServedCrd] | None, str, bool]:
    """(the family's CRDs on the server by name, or None; why not; whether to cache that).

    Each answer is analysed once per distinct content (`served_crd`), so a second client of
    the same server only pays for the reads."""
    names = sorted({c.metadata.name for t in fam.tags for c in pinned_crds(fam.name, t)})
    found: dict[str, ServedCrd] = {}
    for name in names:
        try:
            body = get_bytes(client, f"{CRD_PATH}/{name}")
        except Forbidden:
            return None, "CRDs not readable: forbidden", True
        except ApiError as exc:
            return None, f"CRDs not readable: {exc}", False
        if body is None:
            continue
        try:
            found[name] = served_crd(body)
        except ValueError:
            return None, f"CRDs not readable: the answer for {name} is not a JSON object", False
    if not found:
        return None, "CRDs not found", True
    return found, "", True


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


def _negotiate(client: Client, fam: Family) -> tuple[FamilyRelease, bool]:
    base = partial(FamilyRelease, family=fam.name, product=fam.product, group=fam.group)
    try:
        served = served_versions(client, fam.group)
    except NotServed:
        return base(how="absent"), True
    mine = [v for v in served if fam.versions is None or v in fam.versions]
    if not mine:
        return base(how="absent", note=f"serves {', '.join(served)}"), True
    listed = {v: _resources(client, fam.group, v) for v in mine}
    kinds = {v: k for v, (k, _) in listed.items()}
    crds, why, final = _read_crds(client, fam)
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
        return (
            base(
                how="crd" if exact else "closest",
                versions=_versions_from_crds(mine, (c.summary for c in crds.values()), kinds),
                release=match.exact[0] if len(match.exact) == 1 else None,
                candidates=match.exact if exact else match.closest,
                similarity=match.similarity,
                crd_paths=paths,
            ),
            final,
        )
    versions = tuple(
        ServedVersion(
            v,
            storage=bool(listed[v][1]) if listed[v][0] else None,
            kinds=tuple(sorted(listed[v][0])),
        )
        for v in mine
    )
    candidates = _discovery_candidates(fam, kinds)
    notes = [n for n in (_hint(fam, mine), why) if n]
    if candidates:
        notes.append(f"discovery matches pinned {', '.join(candidates)}")
    release = base(how="discovery", versions=versions, candidates=candidates, note="; ".join(notes))
    return release, final
