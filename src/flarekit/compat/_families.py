"""The software families flarekit negotiates with, and what the pinned releases say of each.

A *family* is one upstream project whose CRDs a cluster may have installed (KubeRay, Kueue,
JobSet, AppWrapper, the legacy MCAD AppWrapper, Kubeflow Trainer, the Kubeflow training
operator). Each owns one API group (the two AppWrappers share one and are told apart by the
version they serve). Which CRDs a family installs, and which versions and kinds each pinned
release serves, comes from the compact CRDs the generator bundles
(`flarekit_models._crds`), so that adding a pinned release needs no code here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import flarekit_models
from flarekit.compat._crd_models import CustomResourceDefinition
from flarekit_models import PINNED_RELEASES

__all__ = [
    "FAMILIES",
    "Family",
    "family",
    "family_for",
    "pinned_crds",
    "served_kinds",
    "tag_order",
]


@dataclass(frozen=True)
class Family:
    """One upstream project: its name in the release tables, what users call it, its API
    group, and the group versions that belong to it (None: every version of the group)."""

    name: str
    product: str
    group: str
    versions: tuple[str, ...] | None = None

    @property
    def tags(self) -> tuple[str, ...]:
        """Its pinned releases, oldest first."""
        return PINNED_RELEASES.get(self.name, ())


#: In the order `flarekit version` lists them.
FAMILIES: tuple[Family, ...] = (
    Family("kuberay", "KubeRay", "ray.io"),
    Family("kueue", "Kueue", "kueue.x-k8s.io"),
    Family("jobset", "JobSet", "jobset.x-k8s.io"),
    Family("appwrapper", "AppWrapper", "workload.codeflare.dev", ("v1beta2",)),
    Family("appwrapper-mcad", "AppWrapper (MCAD)", "workload.codeflare.dev", ("v1beta1",)),
    Family("trainer", "Kubeflow Trainer", "trainer.kubeflow.org"),
    Family("training-operator", "Kubeflow Training Operator", "kubeflow.org"),
)
_BY_NAME = {f.name: f for f in FAMILIES}


def family(name: str) -> Family:
    """A family by name; a clear error lists the known ones."""
    found = _BY_NAME.get(name)
    if found is None:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(_BY_NAME)}")
    return found


def family_for(api_version: str) -> Family | None:
    """The family whose objects have this apiVersion (None for Kubernetes' own kinds)."""
    group, _, version = api_version.rpartition("/")
    for candidate in FAMILIES:
        if candidate.group == group and (
            candidate.versions is None or version in candidate.versions
        ):
            return candidate
    return None


@cache
def pinned_crds(name: str, tag: str) -> tuple[CustomResourceDefinition, ...]:
    """The compact CRDs of one pinned release, as models (shared, not to be modified)."""
    return tuple(
        CustomResourceDefinition.model_validate(c) for c in flarekit_models.crds_for({name: tag})
    )


def served_kinds(crds: Iterable[CustomResourceDefinition]) -> dict[str, frozenset[str]]:
    """Served version -> the kinds served in it, from CRDs."""
    out: dict[str, set[str]] = {}
    for crd in crds:
        for version in crd.spec.versions:
            if version.served:
                out.setdefault(version.name, set()).add(crd.kind)
    return {v: frozenset(k) for v, k in out.items()}


def tag_order(tag: str) -> tuple[int, ...]:
    """Sort key of a ``vX.Y.Z`` tag."""
    parts = []
    for piece in tag.lstrip("v").split("."):
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
