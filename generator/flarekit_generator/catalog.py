"""Which kinds and versions to generate, and from which release.

Every API version any pinned release serves gets a module; each kind in it is
generated from the newest release that serves it, and the older releases are
recorded (registry and per-field table).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from flarekit_generator.ir import CrdInfo, ServedVersion

#: API group -> package name under flarekit_models.
GROUP_PACKAGES = {
    "ray.io": "ray",
    "kueue.x-k8s.io": "kueue",
    "jobset.x-k8s.io": "jobset",
    "workload.codeflare.dev": "appwrapper",
    "trainer.kubeflow.org": "trainer",
    "kubeflow.org": "kubeflow",
}
#: When two families define the same CRD, the default cluster installs the first listed.
FAMILY_PREFERENCE = (
    "kuberay",
    "kueue",
    "jobset",
    "appwrapper",
    "trainer",
    "training-operator",
    "appwrapper-mcad",
)


def release_key(tag: str) -> tuple[int, ...]:
    """Order tags like v1.10.2 numerically."""
    return tuple(int(part) for part in re.findall(r"\d+", tag))


def package_for(group: str) -> str:
    return GROUP_PACKAGES.get(group) or group.split(".")[0].replace("-", "_")


@dataclass
class KindVersion:
    """One kind in one API version, with every release that serves it."""

    group: str
    version: str
    kind: str
    releases: list[tuple[CrdInfo, ServedVersion]] = field(default_factory=list)

    @property
    def newest(self) -> tuple[CrdInfo, ServedVersion]:
        return max(self.releases, key=lambda r: release_key(r[0].release))

    @property
    def module(self) -> str:
        return f"{package_for(self.group)}.{self.version}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


@dataclass
class Catalog:
    kinds: dict[tuple[str, str, str], KindVersion]
    releases: dict[str, list[str]]  # family -> tags, oldest first
    crds: list[CrdInfo]

    def modules(self) -> dict[str, list[KindVersion]]:
        out: dict[str, list[KindVersion]] = defaultdict(list)
        for key in sorted(self.kinds):
            kv = self.kinds[key]
            out[kv.module].append(kv)
        return dict(sorted(out.items()))

    def default_releases(self) -> dict[str, str]:
        chosen: dict[str, str] = {}
        owned: set[str] = set()
        families = sorted(self.releases, key=_preference)
        for family in families:
            tag = self.releases[family][-1]
            names = {
                f"{c.plural}.{c.group}"
                for c in self.crds
                if c.family == family and c.release == tag
            }
            if names & owned:
                continue
            owned |= names
            chosen[family] = tag
        return dict(sorted(chosen.items()))


def _preference(family: str) -> tuple[int, str]:
    order = FAMILY_PREFERENCE.index(family) if family in FAMILY_PREFERENCE else 99
    return order, family


def build_catalog(crds: list[CrdInfo]) -> Catalog:
    kinds: dict[tuple[str, str, str], KindVersion] = {}
    releases: dict[str, set[str]] = defaultdict(set)
    for crd in crds:
        releases[crd.family].add(crd.release)
        for version in crd.versions:
            if not version.served:
                continue
            key = (crd.group, version.name, crd.kind)
            kv = kinds.setdefault(key, KindVersion(crd.group, version.name, crd.kind))
            kv.releases.append((crd, version))
    return Catalog(
        kinds=kinds,
        releases={f: sorted(tags, key=release_key) for f, tags in sorted(releases.items())},
        crds=crds,
    )
