"""A Workload's topology assignment: v1beta1's domain list and v1beta2's compressed slices.

v1beta1 lists every domain (``domains[] = {values: [one per level], count}``). v1beta2 groups
domains into ``slices``, each with ``domainCount``, per level either one ``universal`` value
or ``individual`` values (``prefix + root + suffix``), and pod counts either ``universal`` or
``individual``. Both describe the same list of (values, count) pairs: expanding slices gives
the v1beta1 domains, and the domains fit in one slice, so v1beta1 -> v1beta2 -> v1beta1 gives
the domains back exactly (a v1beta2 assignment comes back as one slice without prefixes).
"""

from __future__ import annotations

from typing import Any

from flarekit.compat._engine import Context

__all__ = ["domains_to_slices", "slices_to_domains"]


def domains_to_slices(assignment: dict[str, Any], path: str, ctx: Context) -> None:
    """Replace ``domains`` by one slice holding them all, in order."""
    if "domains" not in assignment:
        return
    domains = assignment.pop("domains")
    if "slices" in assignment:
        ctx.refuse(f"{path}.domains", "slices is set as well; v1beta2 has only slices")
    levels = len(assignment.get("levels") or ())
    slices: list[dict[str, Any]] = []
    if domains:
        for index, domain in enumerate(domains):
            extra = set(domain) - {"values", "count"}
            if extra:
                ctx.refuse(f"{path}.domains[{index}].{sorted(extra)[0]}", "no place in a slice")
            if len(domain.get("values") or ()) != levels:
                ctx.refuse(
                    f"{path}.domains[{index}].values", f"needs one value per level ({levels})"
                )
        per_level = [[d["values"][i] for d in domains] for i in range(levels)]
        counts = [d["count"] for d in domains]
        slices.append(
            {
                "domainCount": len(domains),
                "valuesPerLevel": [_compact(values, "roots") for values in per_level],
                "podCounts": _compact(counts, None),
            }
        )
    assignment["slices"] = slices


def _compact(values: list[Any], key: str | None) -> dict[str, Any]:
    if len(set(values)) == 1:
        return {"universal": values[0]}
    return {"individual": {key: values} if key else values}


def slices_to_domains(assignment: dict[str, Any], path: str, ctx: Context) -> None:
    """Replace ``slices`` by the domains they stand for, slice by slice."""
    if "slices" not in assignment:
        return
    domains: list[dict[str, Any]] = []
    for index, piece in enumerate(assignment.pop("slices")):
        where = f"{path}.slices[{index}]"
        count = piece["domainCount"]
        levels = [
            _expand(level, count, f"{where}.valuesPerLevel[{i}]", ctx)
            for i, level in enumerate(piece["valuesPerLevel"])
        ]
        pods = _expand_counts(piece["podCounts"], count, f"{where}.podCounts", ctx)
        for j in range(count):
            domains.append({"values": [level[j] for level in levels], "count": pods[j]})
    assignment["domains"] = domains


def _expand(level: dict[str, Any], count: int, where: str, ctx: Context) -> list[str]:
    if "universal" in level:
        return [level["universal"]] * count
    individual = level["individual"]
    roots = individual["roots"]
    if len(roots) != count:
        ctx.refuse(f"{where}.individual.roots", f"needs {count} values (domainCount)")
    prefix, suffix = individual.get("prefix", ""), individual.get("suffix", "")
    return [f"{prefix}{root}{suffix}" for root in roots]


def _expand_counts(counts: dict[str, Any], count: int, where: str, ctx: Context) -> list[int]:
    if "universal" in counts:
        return [counts["universal"]] * count
    individual = list(counts["individual"])
    if len(individual) != count:
        ctx.refuse(f"{where}.individual", f"needs {count} values (domainCount)")
    return individual
