"""Typed values validate themselves and survive their JSON payload unchanged."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from factledger.domain.errors import InvalidFieldNameError, InvalidValueError
from factledger.domain.values import (
    BooleanValue,
    DateValue,
    FieldValue,
    ListValue,
    MoneyValue,
    NumberValue,
    TextValue,
    check_field_name,
    display_of,
    from_payload,
    render,
    to_payload,
)

VALUES: list[FieldValue] = [
    TextValue("Supplier B"),
    NumberValue(Decimal("12.5")),
    MoneyValue(Decimal("1200.00"), "EUR"),
    DateValue(date(2026, 3, 1)),
    BooleanValue(value=False),
    ListValue(("tea", "coffee")),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_every_value_round_trips_through_its_payload(value: FieldValue) -> None:
    assert from_payload(to_payload(value)) == value
    assert render(value)


@pytest.mark.parametrize(
    "build",
    [
        lambda: TextValue("  "),
        lambda: NumberValue(Decimal("NaN")),
        lambda: MoneyValue(Decimal(1), "euro"),
        lambda: ListValue(("ok", "")),
    ],
    ids=["blank-text", "nan", "bad-currency", "blank-item"],
)
def test_malformed_values_are_refused(build: object) -> None:
    with pytest.raises(InvalidValueError):
        build()  # type: ignore[operator]


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "colour", "value": "red"},
        {"type": "number", "value": "twelve"},
        {"type": "date", "value": "March"},
        {"type": "boolean", "value": "yes"},
        {"type": "list", "items": ["a", 1]},
    ],
)
def test_malformed_payloads_are_refused(payload: dict[str, object]) -> None:
    with pytest.raises(InvalidValueError):
        from_payload(payload)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_a_payloads_display_is_its_values_rendering(value: FieldValue) -> None:
    assert display_of(to_payload(value)) == render(value)


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "text", "value": "   "},
        {"type": "text", "value": "x" * 100_000},
        {"type": "text", "value": 12},
        {"type": "colour", "value": "red"},
        {"type": "number", "value": "twelve"},
    ],
    ids=["blank", "too-long", "not-text", "unknown-type", "bad-number"],
)
def test_a_malformed_payloads_display_fails_as_its_parse_does(payload: dict[str, object]) -> None:
    with pytest.raises(InvalidValueError) as parsed:
        from_payload(payload)  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError) as shown:
        display_of(payload)  # type: ignore[arg-type]
    assert str(shown.value) == str(parsed.value)


@pytest.mark.parametrize("name", ["Supplier", "1st", "a-b", "", "x" * 65])
def test_field_names_are_lower_case_identifiers(name: str) -> None:
    with pytest.raises(InvalidFieldNameError):
        check_field_name(name)
