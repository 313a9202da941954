"""Resources per training node, checked before they reach a pod.

`{"cpu": 4, "memory": "16Gi", "gpu": 1}` is how people say what one node of a job needs
(the Kubeflow SDK's `resources_per_node`). Each amount must be a real quantity (``"lots"``,
``"8Gb"`` and negative numbers are refused with a hint), device counts must be whole, and
names must be known: ``cpu``, ``memory``, ``ephemeral-storage``, ``gpu`` (NVIDIA's GPU) and the
extended resources device plugins advertise. The result is used as both requests and limits,
as Trainer and the training operator expect for devices.
"""

from __future__ import annotations

from collections.abc import Mapping

from flarekit._quantity import format_quantity, is_bare_number
from flarekit._validation import (
    DEFAULT_EXTENDED_RESOURCES,
    ValidationReport,
    check_extended_resources,
    check_quantity,
)

__all__ = ["ALIASES", "check_resources_per_node"]

#: Short names accepted for common resources.
ALIASES = {"gpu": "nvidia.com/gpu", "storage": "ephemeral-storage"}
_STANDARD = ("cpu", "memory", "ephemeral-storage")
_BYTES = ("memory", "ephemeral-storage")


def check_resources_per_node(report: ValidationReport, field: str, value: object) -> dict[str, str]:
    """`value` as canonical quantity strings by resource name ({} if it has problems)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        report.add(
            field,
            value,
            f"expected a dict, got {type(value).__name__}",
            "e.g. {'cpu': 4, 'memory': '16Gi', 'gpu': 1}",
        )
        return {}
    before = len(report)
    out: dict[str, str] = {}
    devices: dict[str, object] = {}
    for raw_name, amount in value.items():
        name = ALIASES.get(raw_name, raw_name) if isinstance(raw_name, str) else raw_name
        where = f"{field}[{raw_name!r}]"
        if name in _STANDARD:
            if name in _BYTES and is_bare_number(amount) and not isinstance(amount, str):
                report.add(
                    where,
                    amount,
                    "a bare number of bytes",
                    f"a quantity with a unit, such as '{amount}Gi' or '{amount}G'",
                )
                continue
            exact = check_quantity(report, where, amount)
            if exact is not None:
                out[name] = format_quantity(exact, binary=name in _BYTES)
        elif name in DEFAULT_EXTENDED_RESOURCES:
            devices[name] = amount
        else:
            accepted = ", ".join([*_STANDARD, *ALIASES, *sorted(DEFAULT_EXTENDED_RESOURCES)])
            report.add(where, amount, f"unknown resource {raw_name!r}", f"one of {accepted}")
    if devices:
        counts = check_extended_resources(report, field, devices, DEFAULT_EXTENDED_RESOURCES)
        out.update({name: str(count) for name, count in counts.items()})
    return out if len(report) == before else {}
