"""ClusterQueue between Kueue v1beta1 and v1beta2.

What differs (Kueue 0.15 introduced v1beta2; its own webhook conversion does the same):

* ``spec.cohort`` is ``spec.cohortName`` in v1beta2.
* ``spec.admissionChecks`` (a list of names, deprecated in v1beta1) is gone; v1beta2 has only
  ``spec.admissionChecksStrategy.admissionChecks[].name``. Going to v1beta2 the list becomes
  strategy rules without ``onFlavors``; going back, a strategy whose rules are all bare names
  becomes the list again (every v1beta1 release accepts it), so the v1beta1 samples round-trip.
* ``spec.flavorFungibility``: v1beta1's ``Borrow`` (``whenCanBorrow``) and ``Preempt``
  (``whenCanPreempt``) are v1beta2's ``MayStopSearch``. Going back, ``MayStopSearch`` becomes
  ``Borrow``/``Preempt``, the spelling every v1beta1 release accepts (``MayStopSearch`` is
  valid in v1beta1 only from Kueue 0.15).
* Refused by name: ``spec.concurrentAdmissionPolicy`` (v1beta2 only), and in status
  ``pendingWorkloadsStatus`` and ``fairSharing.admissionFairSharingStatus`` (v1beta1 only).
"""

from __future__ import annotations

from typing import Any

from flarekit.compat._engine import Context
from flarekit.compat._kueue_versions import pair
from flarekit.compat._reshape import Reshape

__all__ = ["clusterqueue_v1beta1_to_v1beta2", "clusterqueue_v1beta2_to_v1beta1"]

_V1BETA1, _V1BETA2 = pair("ClusterQueue")
_FUNGIBILITY = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}


def _checks_to_strategy(data: dict[str, Any], ctx: Context) -> None:
    spec = data.get("spec")
    if not isinstance(spec, dict) or "admissionChecks" not in spec:
        return
    names = spec.pop("admissionChecks")
    if "admissionChecksStrategy" in spec:
        ctx.refuse(
            "spec.admissionChecks",
            "spec.admissionChecksStrategy is set as well; v1beta2 has only the strategy",
        )
    if names:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": n} for n in names]}


def _strategy_to_checks(data: dict[str, Any], ctx: Context) -> None:
    spec = data.get("spec")
    if not isinstance(spec, dict):
        return
    strategy = spec.get("admissionChecksStrategy")
    if not isinstance(strategy, dict) or set(strategy) != {"admissionChecks"}:
        return
    rules = strategy["admissionChecks"]
    if rules and all(isinstance(r, dict) and set(r) == {"name"} for r in rules):
        del spec["admissionChecksStrategy"]
        spec["admissionChecks"] = [r["name"] for r in rules]


def _fungibility(to_v1beta2: bool) -> Any:
    def hook(data: dict[str, Any], ctx: Context) -> None:
        spec = data.get("spec")
        fungibility = spec.get("flavorFungibility") if isinstance(spec, dict) else None
        if not isinstance(fungibility, dict):
            return
        for field, legacy in _FUNGIBILITY.items():
            value = fungibility.get(field)
            if to_v1beta2 and value == legacy:
                fungibility[field] = "MayStopSearch"
            elif not to_v1beta2 and value == "MayStopSearch":
                fungibility[field] = legacy

    return hook


clusterqueue_v1beta1_to_v1beta2 = Reshape(
    _V1BETA1,
    _V1BETA2,
    moves=(("spec.cohort", "spec.cohortName"),),
    hooks=(_checks_to_strategy, _fungibility(True)),
)
clusterqueue_v1beta2_to_v1beta1 = Reshape(
    _V1BETA2,
    _V1BETA1,
    moves=(("spec.cohortName", "spec.cohort"),),
    hooks=(_strategy_to_checks, _fungibility(False)),
)
