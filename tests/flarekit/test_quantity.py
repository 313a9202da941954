"""Kubernetes quantities: exact parsing, refusals with hints, canonical formatting."""

from __future__ import annotations

from decimal import Decimal

import pytest

from flarekit._quantity import QuantityError, format_quantity, is_bare_number, parse_quantity


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("500m", "0.5"),
        ("2", "2"),
        ("1.5", "1.5"),
        (".5", "0.5"),
        ("1.", "1"),
        ("+3", "3"),
        ("8Gi", str(8 * 1024**3)),
        ("512Mi", str(512 * 1024**2)),
        ("1Ki", "1024"),
        ("1Ei", str(1024**6)),
        ("8G", "8000000000"),
        ("1k", "1000"),
        ("1E", "1000000000000000000"),
        ("1e3", "1000"),
        ("1E3", "1000"),
        ("5e-1", "0.5"),
        ("250u", "0.00025"),
        ("3n", "0.000000003"),
        ("0.1", "0.1"),
    ],
)
def test_parses_exactly(text: str, expected: str) -> None:
    assert parse_quantity(text) == Decimal(expected)


def test_numbers_are_accepted_as_they_are() -> None:
    assert parse_quantity(4) == 4
    assert parse_quantity(0.5) == Decimal("0.5")
    # Exact: no binary floating point drift through repr().
    assert parse_quantity(0.1) + parse_quantity(0.2) == parse_quantity("300m")


def test_comparisons_are_exact_across_suffixes() -> None:
    assert parse_quantity("1Gi") > parse_quantity("1G")
    assert parse_quantity("1000M") == parse_quantity("1G")
    assert parse_quantity("1024Mi") == parse_quantity("1Gi")
    assert parse_quantity("100m") < parse_quantity("0.2")


@pytest.mark.parametrize("value", ["lots", "two", "", "1e1.5", "Gi", "8 Gi", "8Gb", "--1", "1e"])
def test_refuses_what_kubernetes_refuses(value: str) -> None:
    with pytest.raises(QuantityError, match="not a Kubernetes quantity"):
        parse_quantity(value)


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("8Gb", "did you mean '8Gi' (binary, 1024-based) or '8G'?"),
        ("8GB", "did you mean '8Gi' (binary, 1024-based) or '8G'?"),
        ("8GiB", "did you mean '8Gi' (binary, 1024-based) or '8G'?"),
        ("8gi", "did you mean '8Gi' (binary, 1024-based) or '8G'?"),
        ("512mb", "did you mean '512Mi' (binary, 1024-based) or '512M'?"),
        ("4K", "did you mean '4Ki' (binary, 1024-based) or '4k'?"),
        ("8 Gi", "no spaces inside a quantity: did you mean '8Gi'?"),
        ("1,5", "use a dot as decimal separator: did you mean '1.5'?"),
    ],
)
def test_hints_name_what_was_meant(value: str, hint: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(value)
    assert info.value.hint == hint
    assert hint in str(info.value)


@pytest.mark.parametrize("value", ["lots", "two", "1e1.5"])
def test_no_hint_without_a_plausible_meaning(value: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(value)
    assert info.value.hint is None


@pytest.mark.parametrize("value", [True, None, [1], {"cpu": 1}, float("nan"), float("inf")])
def test_refuses_other_types(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)


def test_negatives_only_when_allowed() -> None:
    with pytest.raises(QuantityError, match="must not be negative"):
        parse_quantity("-1")
    with pytest.raises(QuantityError, match="must not be negative"):
        parse_quantity(-3)
    assert parse_quantity("-250m", allow_negative=True) == Decimal("-0.25")


@pytest.mark.parametrize(
    ("value", "decimal", "binary"),
    [
        ("0", "0", "0"),
        ("0.5", "500m", "500m"),
        ("1.5", "1500m", "1500m"),
        ("2", "2", "2"),
        ("1500", "1500", "1500"),
        ("2000", "2k", "2k"),
        ("8000000000", "8G", "7812500Ki"),
        ("1073741824", "1073741824", "1Gi"),
        ("0.00025", "250u", "250u"),
        ("-0.25", "-250m", "-250m"),
        ("0.0000000001", "1n", "1n"),
    ],
)
def test_formats_canonically(value: str, decimal: str, binary: str) -> None:
    assert format_quantity(Decimal(value)) == decimal
    assert format_quantity(Decimal(value), binary=True) == binary
    assert parse_quantity(decimal, allow_negative=True) >= Decimal(value)


def test_format_round_trips() -> None:
    for text in ["500m", "8Gi", "3", "1500", "250u", "7n", "12E"]:
        exact = parse_quantity(text)
        assert parse_quantity(format_quantity(exact)) == exact
        assert parse_quantity(format_quantity(exact, binary=True)) == exact


def test_bare_numbers() -> None:
    assert (
        is_bare_number(8) and is_bare_number("8") and is_bare_number("1.5") and is_bare_number(0.5)
    )
    assert not is_bare_number("8G") and not is_bare_number("1e3") and not is_bare_number(True)
    assert not is_bare_number("-1") and not is_bare_number("lots")
