"""A Workload's topology assignment: v1beta1's domain list and v1beta2's compressed slices.

v1beta1 lists every domain (``domains[] = {values: [one per level], count}``). v1beta2 groups
domains into ``slices``, each with ``domainCount``, per level either one ``universal`` value
or ``individual`` values (``prefix + root + suffix``), and pod counts either ``universal`` or
``individual``. Both describe the same list of (values, count) pairs: expanding slices gives
the v1beta1 domains, and the domains fit in one slice, so v1beta1 -> v1beta2 -> v1beta1 gives
the domains back exactly (a v1beta2 assignment comes back as one slice without prefixes).
"""

from __future__ import annotations

from flarekit.compat._engine import Context
from flarekit_models.kueue import v1beta1, v1beta2

__all__ = ["domains_to_slices", "slices_to_domains"]


def domains_to_slices(
    assignment: v1beta1.TopologyAssignment, path: str, ctx: Context
) -> v1beta2.TopologyAssignment:
    """The assignment with its domains as one slice holding them all, in order."""
    extras = dict(assignment.model_extra or {})
    if "slices" in extras:
        ctx.refuse(f"{path}.domains", "slices is set as well; v1beta2 has only slices")
    levels = len(assignment.levels)
    domains = assignment.domains
    slices: list[v1beta2.Slice] = []
    if domains:
        for index, domain in enumerate(domains):
            if domain.model_extra:
                where = f"{path}.domains[{index}].{sorted(domain.model_extra)[0]}"
                ctx.refuse(where, "no place in a slice")
            if len(domain.values) != levels:
                ctx.refuse(
                    f"{path}.domains[{index}].values", f"needs one value per level ({levels})"
                )
        per_level = [[d.values[i] for d in domains] for i in range(levels)]
        slices.append(
            v1beta2.Slice(
                domain_count=len(domains),
                values_per_level=[_compact_values(values) for values in per_level],
                pod_counts=_compact_counts([d.count for d in domains]),
            )
        )
    return v1beta2.TopologyAssignment(levels=list(assignment.levels), slices=slices, **extras)


def _compact_values(values: list[str]) -> v1beta2.ValuesPerLevel:
    if len(set(values)) == 1:
        return v1beta2.ValuesPerLevel(universal=values[0])
    return v1beta2.ValuesPerLevel(individual=v1beta2.Individual(roots=values))


def _compact_counts(counts: list[int]) -> v1beta2.PodCounts:
    if len(set(counts)) == 1:
        return v1beta2.PodCounts(universal=counts[0])
    return v1beta2.PodCounts(individual=counts)


def slices_to_domains(
    assignment: v1beta2.TopologyAssignment, path: str, ctx: Context
) -> v1beta1.TopologyAssignment:
    """The assignment with its slices as the domains they stand for, slice by slice."""
    extras = dict(assignment.model_extra or {})
    if "domains" in extras:
        ctx.refuse(f"{path}.slices", "domains is set as well; v1beta1 has only domains")
    domains: list[v1beta1.Domain] = []
    for index, piece in enumerate(assignment.slices):
        where = f"{path}.slices[{index}]"
        count = piece.domain_count
        levels = [
            _expand(level, count, f"{where}.valuesPerLevel[{i}]", ctx)
            for i, level in enumerate(piece.values_per_level)
        ]
        pods = _expand_counts(piece.pod_counts, count, f"{where}.podCounts", ctx)
        for j in range(count):
            domains.append(v1beta1.Domain(values=[level[j] for level in levels], count=pods[j]))
    return v1beta1.TopologyAssignment(levels=list(assignment.levels), domains=domains, **extras)


def _expand(level: v1beta2.ValuesPerLevel, count: int, where: str, ctx: Context) -> list[str]:
    if level.universal is not None:
        return [level.universal] * count
    individual = level.individual
    if individual is None:
        ctx.refuse(where, "needs universal or individual values")
    if len(individual.roots) != count:
        ctx.refuse(f"{where}.individual.roots", f"needs {count} values (domainCount)")
    prefix, suffix = individual.prefix or "", individual.suffix or ""
    return [f"{prefix}{root}{suffix}" for root in individual.roots]


def _expand_counts(counts: v1beta2.PodCounts, count: int, where: str, ctx: Context) -> list[int]:
    if counts.universal is not None:
        return [counts.universal] * count
    if counts.individual is None:
        ctx.refuse(where, "needs universal or individual counts")
    if len(counts.individual) != count:
        ctx.refuse(f"{where}.individual", f"needs {count} values (domainCount)")
    return list(counts.individual)
