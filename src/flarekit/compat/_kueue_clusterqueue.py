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

from typing import Literal

from flarekit.compat._engine import Context
from flarekit.compat._reshape import Reshape
from flarekit_models.kueue import v1beta1, v1beta2

__all__ = ["clusterqueue_v1beta1_to_v1beta2", "clusterqueue_v1beta2_to_v1beta1"]

_Choice = Literal["MayStopSearch", "TryNextFlavor"]
#: v1beta1's values as v1beta2 spells them (the legacy ones become ``MayStopSearch``).
_BORROW: dict[str, _Choice] = {
    "Borrow": "MayStopSearch",
    "MayStopSearch": "MayStopSearch",
    "TryNextFlavor": "TryNextFlavor",
}
_PREEMPT: dict[str, _Choice] = {
    "Preempt": "MayStopSearch",
    "MayStopSearch": "MayStopSearch",
    "TryNextFlavor": "TryNextFlavor",
}


def _one_checks_field(source: v1beta1.ClusterQueue, ctx: Context) -> None:
    spec = source.spec
    if (
        spec is not None
        and spec.admission_checks is not None
        and spec.admission_checks_strategy is not None
    ):
        ctx.refuse(
            "spec.admissionChecks",
            "spec.admissionChecksStrategy is set as well; v1beta2 has only the strategy",
        )


def _checks_to_strategy(
    source: v1beta1.ClusterQueue, target: v1beta2.ClusterQueue, ctx: Context
) -> None:
    names = source.spec.admission_checks if source.spec else None
    if names and target.spec is not None:
        rules = [v1beta2.AdmissionChecksStrategyAdmissionCheck(name=n) for n in names]
        target.spec.admission_checks_strategy = v1beta2.AdmissionChecksStrategy(
            admission_checks=rules
        )


def _strategy_to_checks(
    source: v1beta2.ClusterQueue, target: v1beta1.ClusterQueue, ctx: Context
) -> None:
    """A strategy whose rules are bare names becomes the list of names again."""
    strategy = source.spec.admission_checks_strategy if source.spec else None
    if strategy is None or target.spec is None:
        return
    rules = strategy.admission_checks
    if not strategy.model_extra and all(r.on_flavors is None and not r.model_extra for r in rules):
        target.spec.admission_checks = [r.name for r in rules]
    else:
        target.spec.admission_checks_strategy = v1beta1.AdmissionChecksStrategy.model_validate(
            strategy.to_dict()
        )


def _fungibility_to_v1beta2(
    source: v1beta1.ClusterQueue, target: v1beta2.ClusterQueue, ctx: Context
) -> None:
    old = source.spec.flavor_fungibility if source.spec else None
    new = target.spec.flavor_fungibility if target.spec else None
    if old is None or new is None:
        return
    if old.when_can_borrow is not None:
        new.when_can_borrow = _BORROW[old.when_can_borrow]
    if old.when_can_preempt is not None:
        new.when_can_preempt = _PREEMPT[old.when_can_preempt]


def _fungibility_to_v1beta1(
    source: v1beta2.ClusterQueue, target: v1beta1.ClusterQueue, ctx: Context
) -> None:
    """``MayStopSearch`` as ``Borrow``/``Preempt``, which every v1beta1 release accepts."""
    new = target.spec.flavor_fungibility if target.spec else None
    if new is None:
        return
    if new.when_can_borrow == "MayStopSearch":
        new.when_can_borrow = "Borrow"
    if new.when_can_preempt == "MayStopSearch":
        new.when_can_preempt = "Preempt"


clusterqueue_v1beta1_to_v1beta2 = Reshape(
    v1beta1.ClusterQueue,
    v1beta2.ClusterQueue,
    moves=(("spec.cohort", "spec.cohortName"),),
    carried=(
        "spec.admissionChecks",
        "spec.flavorFungibility.whenCanBorrow",
        "spec.flavorFungibility.whenCanPreempt",
    ),
    checks=(_one_checks_field,),
    hooks=(_checks_to_strategy, _fungibility_to_v1beta2),
)
clusterqueue_v1beta2_to_v1beta1 = Reshape(
    v1beta2.ClusterQueue,
    v1beta1.ClusterQueue,
    moves=(("spec.cohortName", "spec.cohort"),),
    carried=("spec.admissionChecksStrategy",),
    hooks=(_strategy_to_checks, _fungibility_to_v1beta1),
)
