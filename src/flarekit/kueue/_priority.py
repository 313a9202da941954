"""WorkloadPriorityClass: a named priority for queued jobs, independent of pod priority.

Why: Kueue orders and preempts Workloads by priority; a WorkloadPriorityClass sets it without
changing how the kubelet or scheduler treat the pods (a PriorityClass would).
"""

from __future__ import annotations

from dataclasses import dataclass

from flarekit._json import JsonObject
from flarekit._validation import ValidationReport, check_dns1123_subdomain
from flarekit.client import KueueVersion
from flarekit.kueue._spec import KueueObjectSpec, drop_none

__all__ = ["WorkloadPriorityClassSpec"]

_INT32 = (-(2**31), 2**31 - 1)
_MAX_DESCRIPTION = 1024  # as Kueue's v1beta2 schema allows


@dataclass
class WorkloadPriorityClassSpec(KueueObjectSpec):
    """WorkloadPriorityClass `name` with priority `value` (higher goes first)."""

    kind = "WorkloadPriorityClass"

    name: str
    value: int
    description: str | None = None

    def _check(self, report: ValidationReport) -> None:
        check_dns1123_subdomain(report, "name", self.name)
        low, high = _INT32
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            report.add("value", self.value, "expected an integer", f"a whole number {low}..{high}")
        elif not low <= self.value <= high:
            report.add("value", self.value, "out of range", f"a whole number {low}..{high}")
        if self.description is not None and (
            not isinstance(self.description, str) or len(self.description) > _MAX_DESCRIPTION
        ):
            report.add(
                "description",
                self.description,
                "not a short text",
                f"a string of at most {_MAX_DESCRIPTION} characters, or None",
            )

    def _content(self, version: KueueVersion) -> JsonObject:
        return drop_none({"value": self.value, "description": self.description})
