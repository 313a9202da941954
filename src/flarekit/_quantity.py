"""Kubernetes resource quantities (``500m``, ``8Gi``, ``1e3``), parsed and compared exactly.

Why not floats: ``0.1 + 0.2`` CPUs or ``1.1G`` of memory must compare exactly against a
limit, and a quantity written back must say what the user wrote. Values are ``Decimal``
and follow the grammar of the Kubernetes ``resource.Quantity`` parser: an optional sign,
a decimal number, then a binary suffix (``Ki`` .. ``Ei``), a decimal suffix (``n u m k M G T
P E``) or a decimal exponent (``e3``, ``E-2``). Common mistakes (``8Gb``, ``8 Gi``, ``8gi``)
are refused with a hint naming what was probably meant.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_CEILING, Context, Decimal, localcontext

__all__ = [
    "QUANTITY_EXAMPLES",
    "QuantityError",
    "format_quantity",
    "is_bare_number",
    "parse_quantity",
]

#: Shown in error messages as what would be accepted.
QUANTITY_EXAMPLES = "a Kubernetes quantity such as 2, '500m', '1.5', '8Gi', '512Mi', '8G' or '1e3'"

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_QUANTITY = re.compile(
    rf"(?P<sign>[+-]?)(?P<number>{_NUMBER})"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<exp>[eE][+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
_BARE = re.compile(rf"[+]?{_NUMBER}")
# A number followed by something unit-like, to explain what went wrong.
_UNITISH = re.compile(rf"\s*(?P<number>[+-]?{_NUMBER})(?P<space>\s*)(?P<unit>[A-Za-z]+)\s*")
_NANO = Decimal("1e-9")
# Enough digits for any quantity Kubernetes stores (int64 scaled by 10^-9 .. 10^18) exactly.
_EXACT = Context(prec=80)


class QuantityError(ValueError):
    """``value`` is not a quantity (or not one the caller allows); ``hint`` says what might be."""

    def __init__(self, value: object, reason: str, hint: str | None = None) -> None:
        self.value = value
        self.reason = reason
        self.hint = hint
        super().__init__(f"{value!r}: {reason}" + (f"; {hint}" if hint else ""))


def is_bare_number(value: object) -> bool:
    """True for ``8``, ``0.5``, ``"8"``, ``"1.5"``: a number with neither suffix nor exponent."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float | Decimal):
        return True
    return isinstance(value, str) and _BARE.fullmatch(value) is not None


def parse_quantity(value: object, *, allow_negative: bool = False) -> Decimal:
    """The exact value of a quantity given as an ``int``, a finite ``float`` or a string.

    Raises :class:`QuantityError` for anything else (``"lots"``, ``"8Gb"``, ``True``) and,
    unless ``allow_negative``, for values below zero.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise QuantityError(value, f"expected a number or a string, got {type(value).__name__}")
    if isinstance(value, int):
        result = Decimal(value)
    elif isinstance(value, float | Decimal):
        if not math.isfinite(value):
            raise QuantityError(value, "not a finite number")
        result = Decimal(repr(value)) if isinstance(value, float) else value
    else:
        with localcontext(_EXACT):
            result = _parse_string(value)
    if result < 0 and not allow_negative:
        raise QuantityError(value, "must not be negative")
    return result


def _parse_string(text: str) -> Decimal:
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(text, "not a Kubernetes quantity", _hint(text))
    number = Decimal(match["number"])
    if match["binary"]:
        number *= Decimal(1024) ** _BINARY[match["binary"]]
    elif match["exp"]:
        number = number.scaleb(int(match["exp"][1:]))
    else:
        number = number.scaleb(_DECIMAL[match["decimal"]])
    return -number if match["sign"] == "-" else number


def _hint(text: str) -> str | None:
    """What the user most likely meant, for the usual slips."""
    if not text.strip():
        return "give a number, for example '1' or '512Mi'"
    if re.fullmatch(r"\s*[+-]?[0-9]+,[0-9]+\s*[A-Za-z]*\s*", text):
        return f"use a dot as decimal separator: did you mean {text.strip().replace(',', '.')!r}?"
    match = _UNITISH.fullmatch(text)
    if match is None:
        return None
    number, unit = match["number"], match["unit"]
    if _QUANTITY.fullmatch(number + unit):
        return f"no spaces inside a quantity: did you mean {number + unit!r}?"
    # Strip a trailing "B"/"iB" byte marker: "8GB", "8Gb", "8GiB", "8gib", "8gi" -> "G".
    core = re.sub(r"(?i)(ib?|b|bytes?)$", "", unit) if len(unit) > 1 else unit
    if len(core) == 1 and core.upper() in "KMGTPE":
        decimal_suffix = "k" if core.upper() == "K" else core.upper()
        binary = f"{number}{core.upper()}i"
        return f"did you mean {binary!r} (binary, 1024-based) or {number + decimal_suffix!r}?"
    return None


def format_quantity(value: Decimal | int, *, binary: bool = False) -> str:
    """``value`` in the canonical form Kubernetes writes: ``"500m"``, ``"2"``, ``"1500"``, ``"8Gi"``.

    The largest suffix that keeps an integer mantissa is chosen (``binary`` prefers
    ``Ki`` .. ``Ei`` for whole numbers of bytes). Like Kubernetes, precision below one
    nano-unit is rounded up.
    """
    value = Decimal(value)
    if value < 0:
        return "-" + format_quantity(-value, binary=binary)
    with localcontext(_EXACT):
        return _format(value, binary)


def _format(value: Decimal, binary: bool) -> str:
    if value != value.quantize(_NANO, rounding=ROUND_CEILING):
        value = value.quantize(_NANO, rounding=ROUND_CEILING)
    if value == 0:
        return "0"
    if binary and value == value.to_integral_value() and value >= 1024:
        for suffix, power in sorted(_BINARY.items(), key=lambda item: -item[1]):
            unit = Decimal(1024) ** power
            if value % unit == 0:
                return f"{int(value / unit)}{suffix}"
    for suffix, exponent in sorted(_DECIMAL.items(), key=lambda item: -item[1]):
        mantissa = value.scaleb(-exponent)
        if mantissa == mantissa.to_integral_value():
            return f"{int(mantissa)}{suffix}"
    raise AssertionError(f"unreachable: {value} has no nano-precision form")  # pragma: no cover
