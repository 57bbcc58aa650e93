"""Typed profile values, their JSON payloads, and the optional per-kind profile schema.

Events store values as small JSON objects (`{"type": "money", "amount": "1200", "currency":
"EUR"}`): strings for decimals and dates, so the event store's transcoder never guesses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Self, TypeAlias

from factledger.domain.errors import (
    InvalidFieldNameError,
    InvalidValueError,
    UnknownFieldError,
    ValueTypeMismatchError,
)
from factledger.domain.said_lines import SAID_LINES

JsonValue: TypeAlias = str | int | float | bool | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, JsonValue]

FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
CURRENCY = re.compile(r"^[A-Z]{3}$")
MAX_TEXT = 2000
MAX_ITEMS = 100


class Immutable:
    """Frozen value objects are shared, never copied: the library deep-copies a cached
    subject for every command, and copying its hundreds of values would dominate the cost."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        return self


class ValueType(StrEnum):
    TEXT = "text"
    NUMBER = "number"
    MONEY = "money"
    DATE = "date"
    BOOLEAN = "boolean"
    LIST = "list"


def _check_text(text: str, what: str) -> None:
    if not text.strip() or len(text) > MAX_TEXT:
        raise InvalidValueError(f"{what}: must be 1..{MAX_TEXT} characters, not blank")


def _check_decimal(number: Decimal, what: str) -> None:
    if not number.is_finite():
        raise InvalidValueError(f"{what}: must be a finite number")


@dataclass(frozen=True, slots=True)
class TextValue(Immutable):
    value: str

    def __post_init__(self) -> None:
        _check_text(self.value, "text")


@dataclass(frozen=True, slots=True)
class NumberValue(Immutable):
    value: Decimal

    def __post_init__(self) -> None:
        _check_decimal(self.value, "number")


@dataclass(frozen=True, slots=True)
class MoneyValue(Immutable):
    amount: Decimal
    currency: str  # ISO 4217 code

    def __post_init__(self) -> None:
        _check_decimal(self.amount, "money.amount")
        if not CURRENCY.fullmatch(self.currency):
            raise InvalidValueError("money.currency: must be a three-letter ISO 4217 code")


@dataclass(frozen=True, slots=True)
class DateValue(Immutable):
    value: date


@dataclass(frozen=True, slots=True)
class BooleanValue(Immutable):
    value: bool


@dataclass(frozen=True, slots=True)
class ListValue(Immutable):
    items: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.items) > MAX_ITEMS:
            raise InvalidValueError(f"list: at most {MAX_ITEMS} items")
        for item in self.items:
            _check_text(item, "list.item")


FieldValue: TypeAlias = TextValue | NumberValue | MoneyValue | DateValue | BooleanValue | ListValue


def value_type(value: FieldValue) -> ValueType:
    match value:
        case TextValue():
            return ValueType.TEXT
        case NumberValue():
            return ValueType.NUMBER
        case MoneyValue():
            return ValueType.MONEY
        case DateValue():
            return ValueType.DATE
        case BooleanValue():
            return ValueType.BOOLEAN
        case ListValue():
            return ValueType.LIST


def to_payload(value: FieldValue) -> JsonObject:
    """The JSON object an event stores for a value."""
    match value:
        case TextValue(text):
            return {"type": "text", "value": text}
        case NumberValue(number):
            return {"type": "number", "value": str(number)}
        case MoneyValue(amount, currency):
            return {"type": "money", "amount": str(amount), "currency": currency}
        case DateValue(day):
            return {"type": "date", "value": day.isoformat()}
        case BooleanValue(flag):
            return {"type": "boolean", "value": flag}
        case ListValue(items):
            return {"type": "list", "items": list(items)}


def _decimal(raw: JsonValue, what: str) -> Decimal:
    if not isinstance(raw, str | int) or isinstance(raw, bool):
        raise InvalidValueError(f"{what}: must be a decimal string")
    try:
        return Decimal(str(raw))
    except InvalidOperation as exc:
        raise InvalidValueError(f"{what}: must be a decimal string") from exc


def from_payload(payload: Mapping[str, JsonValue]) -> FieldValue:
    """Parses and validates a value payload; raises `InvalidValueError` naming the part."""
    raw = payload.get("value")
    match payload.get("type"):
        case ValueType.TEXT if isinstance(raw, str):
            return TextValue(raw)
        case ValueType.NUMBER:
            return NumberValue(_decimal(raw, "number"))
        case ValueType.MONEY if isinstance(payload.get("currency"), str):
            return MoneyValue(
                _decimal(payload.get("amount"), "money.amount"), str(payload["currency"])
            )
        case ValueType.DATE if isinstance(raw, str):
            try:
                return DateValue(date.fromisoformat(raw))
            except ValueError as exc:
                raise InvalidValueError("date: must be an ISO date") from exc
        case ValueType.BOOLEAN if isinstance(raw, bool):
            return BooleanValue(raw)
        case ValueType.LIST if isinstance(items := payload.get("items"), list):
            if not all(isinstance(item, str) for item in items):
                raise InvalidValueError("list.item: must be text")
            return ListValue(tuple(str(item) for item in items))
    raise InvalidValueError("value: unknown type or malformed payload")


def display_of(payload: Mapping[str, JsonValue]) -> str:
    """`render(from_payload(payload))`: the same text, or the same error. A text value's text
    is checked and returned without building the value (a rebuild shows every proposal)."""
    raw = payload.get("value")
    if payload.get("type") == ValueType.TEXT and isinstance(raw, str):
        _check_text(raw, "text")
        return raw
    return render(from_payload(payload))


def render(value: FieldValue) -> str:
    """A short human-readable form for CLIs and notes."""
    match value:
        case TextValue(text):
            return text
        case NumberValue(number):
            return str(number)
        case MoneyValue(amount, currency):
            return f"{amount} {currency}"
        case DateValue(day):
            return day.isoformat()
        case BooleanValue(flag):
            return "yes" if flag else "no"
        case ListValue(items):
            return ", ".join(items)


def field_words(name: str) -> str:
    """A field's name as the words a person says ("team_size" -> "team size")."""
    return name.replace("_", " ")


def check_field_name(name: str) -> None:
    if not FIELD_NAME.fullmatch(name):
        raise InvalidFieldNameError(f"field: must match {FIELD_NAME.pattern}")


@dataclass(frozen=True, slots=True)
class ProfileSchema:
    """The fields a subject kind may hold and the type of each; absent means anything goes."""

    fields: Mapping[str, ValueType] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if SAID_LINES in self.fields:
            raise InvalidFieldNameError(
                f"field {SAID_LINES}: reserved for requests to forget what was said"
            )

    def check(self, field_name: str, value: FieldValue | None) -> None:
        check_field_name(field_name)
        if not self.fields:
            return
        declared = self.fields.get(field_name)
        if declared is None:
            raise UnknownFieldError(f"field {field_name}: not in the profile schema")
        if value is not None and value_type(value) is not declared:
            raise ValueTypeMismatchError(f"field {field_name}: expects {declared.value}")


OPEN_SCHEMA = ProfileSchema()
