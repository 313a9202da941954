"""Resource quantities for simulated operators: parse, add up per pod, and write back.

KubeRay reports the desired CPU, memory and GPUs of a cluster and Kueue the resource usage
of each admitted pod set; both add up container requests. Exact arithmetic (fractions) and
a canonical spelling close to `resource.Quantity.String()` keep those values stable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

_PATTERN = re.compile(
    r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}


def parse(value: Any, where: str = "quantity") -> Fraction:
    """The exact value of a Kubernetes quantity (`"500m"`, `"4Gi"`, `2`)."""
    if isinstance(value, bool):
        raise ValueError(f"{where}: expected a quantity, got {value!r}")
    if isinstance(value, (int, float)):
        return Fraction(value)
    match = _PATTERN.match(str(value).strip())
    if not match:
        raise ValueError(f"{where}: {value!r} is not a quantity (like 500m, 2, 4Gi)")
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * _DECIMAL[suffix]


def format_quantity(value: Fraction, binary: bool = False) -> str:
    """A canonical spelling: whole numbers with the largest exact suffix (binary ones first
    when `binary`), else milli-units."""
    if value.denominator != 1:
        millis = value * 1000
        if millis.denominator == 1:
            return f"{millis.numerator}m"
        return f"{round(value * 10**9)}n"
    whole = value.numerator
    if whole == 0:
        return "0"
    tables = [_BINARY] if binary else []
    tables.append({k: int(v) for k, v in _DECIMAL.items() if v >= 1000})
    for table in tables:
        for suffix, factor in sorted(table.items(), key=lambda item: -item[1]):
            if whole % factor == 0:
                return f"{whole // factor}{suffix}"
    return str(whole)


def spell(resource: str, value: Fraction) -> str:
    """Memory-like resources in binary suffixes, everything else in decimal ones."""
    return format_quantity(value, binary=resource in ("memory", "ephemeral-storage"))


def pod_requests(template: Mapping[str, Any]) -> dict[str, Fraction]:
    """What one pod of a pod template requests, container by container (requests, else
    limits, as the scheduler defaults them)."""
    spec = template.get("spec") or {}
    total: dict[str, Fraction] = {}
    for i, container in enumerate(spec.get("containers") or []):
        resources = container.get("resources") or {}
        wanted = dict(resources.get("limits") or {})
        wanted.update(resources.get("requests") or {})
        for name, amount in wanted.items():
            where = f"spec.containers[{i}].resources.{name}"
            total[name] = total.get(name, Fraction(0)) + parse(amount, where)
    return total


def add(into: dict[str, Fraction], more: Mapping[str, Fraction], times: int = 1) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, Fraction(0)) + amount * times


def canonical(value: Any) -> Any:
    """A quantity as `resource.Quantity` writes it back after reading it (`9` and `"9"` are
    `"9"`, `"1024Mi"` is `"1Gi"`, `"0.5"` is `"500m"`); binary suffixes stay binary, and
    what is not a quantity, or is written with an exponent, is left as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return value
    match = _PATTERN.match(str(value).strip())
    if not match:
        return value
    suffix = match.group(2) or ""
    if suffix[:1] in ("e", "E"):
        return value
    return format_quantity(parse(value), binary=suffix in _BINARY)
