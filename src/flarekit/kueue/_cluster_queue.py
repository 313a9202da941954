"""ClusterQueue: quota per ResourceFlavor and resource, who may use it, and how it preempts.

Why: the admin's main object. ``flavors={"a100": {"cpu": 32, "memory": "256Gi",
"nvidia.com/gpu": 8}}`` is easier to read and to get right than Kueue's resource groups; this
module checks it (names, quantities, limits that need a cohort) and builds the resource groups
Kueue requires: flavors covering the same resources share a group, in the order given, which
is the order Kueue tries them in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from flarekit._json import JsonObject, JsonValue
from flarekit._quantity import format_quantity, is_bare_number
from flarekit._validation import (
    ValidationReport,
    check_dns1123_subdomain,
    check_labels,
    check_qualified_name,
    check_quantity,
)
from flarekit.client import KueueVersion
from flarekit.kueue._spec import KueueObjectSpec, drop_none
from flarekit_models.meta import v1 as meta_v1

__all__ = ["ClusterQueueSpec", "Quota"]

QuantityValue = int | float | str

_CHOICES: dict[str, tuple[str, ...]] = {
    "queueing_strategy": ("BestEffortFIFO", "StrictFIFO"),
    "reclaim_within_cohort": ("Never", "LowerPriority", "Any"),
    "within_cluster_queue": ("Never", "LowerPriority", "LowerOrNewerEqualPriority"),
    "borrow_within_cohort": ("Never", "LowerPriority"),
    "stop_policy": ("None", "Hold", "HoldAndDrain"),
}
_BYTES = ("memory", "ephemeral-storage")
_SELECTOR_KEYS = frozenset({"matchLabels", "matchExpressions"})
_MAX_GROUPS, _MAX_FLAVORS, _MAX_RESOURCES = 16, 64, 64


@dataclass(frozen=True)
class Quota:
    """A resource's quota in one flavor: `nominal`, plus how much more may be borrowed from
    the cohort (`borrowing_limit`) and how much of it may be lent (`lending_limit`)."""

    nominal: QuantityValue
    borrowing_limit: QuantityValue | None = None
    lending_limit: QuantityValue | None = None


def _quantity_text(value: QuantityValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return format_quantity(Decimal(repr(value)))


@dataclass
class ClusterQueueSpec(KueueObjectSpec):
    """ClusterQueue `name` with quota `flavors` (flavor -> resource -> quantity or `Quota`).

    `namespace_selector`: the namespaces whose LocalQueues may use it, as labels
    (``{"team": "ml"}``) or a label selector (``{"matchExpressions": [...]}``); None means
    every namespace. `cohort` shares unused quota with the other ClusterQueues of the cohort.
    The preemption options take Kueue's values; None leaves Kueue's defaults.
    """

    kind = "ClusterQueue"

    name: str
    flavors: Mapping[str, Mapping[str, QuantityValue | Quota]] = field(default_factory=dict)
    cohort: str | None = None
    namespace_selector: Mapping[str, JsonValue] | None = None
    queueing_strategy: str | None = None
    reclaim_within_cohort: str | None = None
    within_cluster_queue: str | None = None
    borrow_within_cohort: str | None = None
    stop_policy: str | None = None

    # -- checks ---------------------------------------------------------------------------------

    def _check(self, report: ValidationReport) -> None:
        check_dns1123_subdomain(report, "name", self.name)
        if self.cohort is not None:
            check_dns1123_subdomain(report, "cohort", self.cohort)
        for option, allowed in _CHOICES.items():
            value = getattr(self, option)
            if value is not None and value not in allowed:
                shown = ", ".join(repr(a) for a in allowed)
                report.add(option, value, "not a known value", f"one of {shown}, or None")
        self._check_selector(report)
        self._check_flavors(report)

    def _check_selector(self, report: ValidationReport) -> None:
        selector = self.namespace_selector
        if selector is None:
            return
        if not isinstance(selector, Mapping):
            report.add(
                "namespace_selector", selector, "expected a dict", "labels or a label selector"
            )
        elif selector and set(selector) <= _SELECTOR_KEYS:
            from pydantic import ValidationError

            try:
                meta_v1.LabelSelector.model_validate(selector)
            except ValidationError as exc:
                report.add_model_errors(
                    "namespace_selector",
                    exc,
                    "a Kubernetes label selector (matchLabels, matchExpressions)",
                )
            check_labels(report, "namespace_selector.matchLabels", selector.get("matchLabels", {}))
        else:
            check_labels(report, "namespace_selector", selector)

    def _check_flavors(self, report: ValidationReport) -> None:
        flavors = self.flavors
        expected = "a dict of flavor name -> {resource: quantity}, e.g. {'default': {'cpu': 8}}"
        if not isinstance(flavors, Mapping) or not flavors:
            report.add("flavors", flavors, "needs at least one flavor", expected)
            return
        if len(flavors) > _MAX_FLAVORS:
            report.add("flavors", len(flavors), "too many flavors", f"at most {_MAX_FLAVORS}")
        for flavor, resources in flavors.items():
            where = f"flavors[{flavor!r}]"
            check_dns1123_subdomain(report, where, flavor)
            if not isinstance(resources, Mapping) or not resources:
                report.add(where, resources, "needs at least one resource", expected)
                continue
            if len(resources) > _MAX_RESOURCES:
                report.add(where, len(resources), "too many resources", f"at most {_MAX_RESOURCES}")
            for resource, quota in resources.items():
                self._check_quota(report, f"{where}[{resource!r}]", resource, quota)
        self._check_groups(report)

    def _check_quota(
        self, report: ValidationReport, where: str, resource: object, quota: object
    ) -> None:
        check_qualified_name(report, where, resource)
        parts = (
            [("", quota.nominal), (".borrowing_limit", quota.borrowing_limit),
             (".lending_limit", quota.lending_limit)]
            if isinstance(quota, Quota)
            else [("", quota)]
        )  # fmt: skip
        values: dict[str, Decimal | None] = {}
        for suffix, value in parts:
            if value is None:
                continue
            if resource in _BYTES and is_bare_number(value) and value not in (0, "0"):
                report.add(
                    where + suffix,
                    value,
                    f"a bare number of bytes for {resource}",
                    "a quantity with a unit, e.g. '32Gi' or '500M'",
                )
                continue
            values[suffix] = check_quantity(report, where + suffix, value)
        limited = isinstance(quota, Quota) and (
            quota.borrowing_limit is not None or quota.lending_limit is not None
        )
        if limited and self.cohort is None:
            report.add(
                where,
                quota,
                "borrowing and lending limits only apply within a cohort",
                "cohort set, or no borrowing_limit/lending_limit",
            )
        nominal, lending = values.get(""), values.get(".lending_limit")
        if nominal is not None and lending is not None and lending > nominal:
            report.add(
                where + ".lending_limit",
                quota.lending_limit if isinstance(quota, Quota) else None,
                f"more than the nominal quota {quota.nominal if isinstance(quota, Quota) else ''}",
                "a lending limit <= the nominal quota",
            )

    def _check_groups(self, report: ValidationReport) -> None:
        groups = self._groups()
        if len(groups) > _MAX_GROUPS:
            report.add("flavors", len(groups), "too many resource groups", f"at most {_MAX_GROUPS}")

    # -- rendering ------------------------------------------------------------------------------

    def _groups(self) -> list[tuple[list[str], list[str]]]:
        """(covered resources, flavors) per resource group, in the order given: flavors that
        share any resource share a group (Kueue lets a resource belong to one group only)."""
        groups: list[tuple[list[str], list[str]]] = []
        for flavor, resources in self.flavors.items():
            covered, members = list(resources), [flavor]
            for group in [g for g in groups if set(g[0]) & set(covered)]:
                groups.remove(group)
                covered = group[0] + [r for r in covered if r not in group[0]]
                members = group[1] + members
            groups.append((covered, members))
        order = list(self.flavors)
        return sorted(groups, key=lambda g: order.index(g[1][0]))

    def _resource_groups(self) -> list[JsonObject]:
        out: list[JsonObject] = []
        for covered, members in self._groups():
            flavors: list[JsonObject] = []
            for flavor in members:
                quotas = self.flavors[flavor]
                resources: list[JsonObject] = []
                for resource in covered:  # Kueue wants them in coveredResources order
                    quota = quotas.get(resource, 0)  # none of it in this flavor
                    if not isinstance(quota, Quota):
                        quota = Quota(quota)
                    resources.append(
                        drop_none(
                            {
                                "name": resource,
                                "nominalQuota": _quantity_text(quota.nominal),
                                "borrowingLimit": _optional(quota.borrowing_limit),
                                "lendingLimit": _optional(quota.lending_limit),
                            }
                        )
                    )
                flavors.append({"name": flavor, "resources": resources})
            out.append({"coveredResources": covered, "flavors": flavors})
        return out

    def _selector(self) -> JsonObject:
        selector = self.namespace_selector
        if not selector:
            return {}  # every namespace (a missing selector would match none)
        if set(selector) <= _SELECTOR_KEYS:
            return dict(selector)
        return {"matchLabels": dict(selector)}

    def _content(self, version: KueueVersion) -> JsonObject:
        preemption = drop_none(
            {
                "reclaimWithinCohort": self.reclaim_within_cohort,
                "withinClusterQueue": self.within_cluster_queue,
                "borrowWithinCohort": (
                    {"policy": self.borrow_within_cohort} if self.borrow_within_cohort else None
                ),
            }
        )
        # v1beta2 renamed `cohort` to `cohortName`; everything else here kept its JSON shape.
        cohort_field = "cohortName" if version == "v1beta2" else "cohort"
        spec = drop_none(
            {
                "namespaceSelector": self._selector(),
                "resourceGroups": self._resource_groups(),
                cohort_field: self.cohort,
                "queueingStrategy": self.queueing_strategy,
                "preemption": preemption or None,
                "stopPolicy": self.stop_policy,
            }
        )
        return {"spec": spec}


def _optional(value: QuantityValue | None) -> str | None:
    return None if value is None else _quantity_text(value)
