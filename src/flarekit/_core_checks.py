"""Checks of the Kubernetes core values a user may give as ``flarekit_models.core.v1`` models
or as their JSON dicts: lists of such models (volumes, mounts, tolerations), and the values
the tolerations' and taints' models take as any string but Kubernetes does not.

Shared by clusters, jobs and Kueue's flavors; the generic checks (names, labels, quantities)
are in `flarekit._validation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from flarekit._validation import ValidationReport, check_label_value, check_qualified_name
from flarekit_models.core import v1 as core_v1

if TYPE_CHECKING:
    from pydantic import BaseModel

    from flarekit_models.core.v1 import Taint, Toleration

    M = TypeVar("M", Taint, Toleration)

__all__ = ["check_models", "check_taints", "check_tolerations"]


_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_OPERATORS = ("Exists", "Equal")


def _choices(values: tuple[str, ...]) -> str:
    return ", ".join(repr(v) for v in values)


def _models(items: object, model: type[M]) -> list[tuple[int, M]]:
    """The entries of `items` (models or their JSON) as models; entries the model refuses are
    skipped (the model check that runs first has reported them)."""
    from pydantic import ValidationError  # loaded with the models, when there are items

    out: list[tuple[int, M]] = []
    for i, item in enumerate(items if isinstance(items, (list, tuple)) else ()):
        if isinstance(item, model):
            out.append((i, item))
        elif isinstance(item, Mapping):
            try:
                out.append((i, model.model_validate(item)))
            except ValidationError:
                continue
    return out


def check_tolerations(report: ValidationReport, field: str, items: object) -> None:
    """The values Kubernetes allows in tolerations (their models take any string): operator
    ``Exists`` or ``Equal``, effect one of the taint effects or empty (all), no value with
    ``Exists``, ``tolerationSeconds`` only with ``NoExecute``."""
    for i, item in _models(items, core_v1.Toleration):
        where = f"{field}[{i}]"
        operator, effect = item.operator, item.effect
        if operator not in (None, "", *_OPERATORS):
            report.add(f"{where}.operator", operator, "not an operator", _choices(_OPERATORS))
        if effect not in (None, "", *_TAINT_EFFECTS):
            report.add(f"{where}.effect", effect, "not a taint effect", _choices(_TAINT_EFFECTS))
        if operator == "Exists" and item.value:
            report.add(f"{where}.value", item.value, "given with operator 'Exists'", "no value")
        if item.toleration_seconds is not None and effect != "NoExecute":
            report.add(
                f"{where}.tolerationSeconds",
                item.toleration_seconds,
                f"given with effect {effect!r}",
                "effect 'NoExecute' (the only effect that evicts), or no tolerationSeconds",
            )
        if item.key:
            check_qualified_name(report, f"{where}.key", item.key)
        elif operator != "Exists":
            report.add(f"{where}.key", item.key, "empty with operator Equal", "a key, or 'Exists'")


def check_taints(report: ValidationReport, field: str, items: object) -> None:
    """The values Kubernetes allows in taints: a key and one of the three effects."""
    for i, item in _models(items, core_v1.Taint):
        where = f"{field}[{i}]"
        check_qualified_name(report, f"{where}.key", item.key)
        if item.effect not in _TAINT_EFFECTS:
            report.add(
                f"{where}.effect", item.effect, "not a taint effect", _choices(_TAINT_EFFECTS)
            )
        if item.value:
            check_label_value(report, f"{where}.value", item.value)


def check_models(report: ValidationReport, field: str, items: object, kind: str) -> list[str]:
    """Items of a list that must each be a ``flarekit_models.core.v1`` model or its JSON dict.

    Returns the ``name`` of every item that has one (for volumes and mounts).
    """
    if not isinstance(items, list):
        report.add(field, items, "expected a list", f"a list of {kind} or dicts")
        return []
    if not items:
        return []  # without importing the models
    from pydantic import ValidationError  # loaded with the models, when there are items

    model: type[BaseModel] = getattr(core_v1, kind)
    names: list[str] = []
    before = len(report)
    for i, item in enumerate(items):
        if isinstance(item, model):
            names.append(getattr(item, "name", None) or "")
            continue
        if not isinstance(item, Mapping):
            report.add(f"{field}[{i}]", item, "expected a dict or a model", f"a {kind} or a dict")
            continue
        # Named even if invalid: a mount of a volume with a typo elsewhere is not reported twice.
        name = item.get("name")
        names.append(name if isinstance(name, str) else "")
        try:
            model.model_validate(item)
        except ValidationError as exc:
            report.add_model_errors(
                f"{field}[{i}]", exc, f"a valid {kind} (Kubernetes JSON field names)"
            )
    if kind == "Toleration" and len(report) == before:  # values the model does not restrict
        check_tolerations(report, field, items)
    return names
