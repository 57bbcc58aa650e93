"""Request and response shapes shared by several routers: errors, values, actors, evidence.

Values travel as tagged objects (`{"type": "money", "amount": "1200", "currency": "EUR"}`),
the same shape the ledger's events store; decimals are strings so no float ever rounds them.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from factledger.domain.provenance import Actor, Evidence
from factledger.domain.values import (
    BooleanValue,
    DateValue,
    FieldValue,
    ListValue,
    MoneyValue,
    NumberValue,
    TextValue,
)

FIELD_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
DECIMAL_PATTERN = r"^-?\d{1,18}(\.\d{1,8})?$"


class Strict(BaseModel):
    """Base of request bodies: unknown fields are errors, so typos never pass silently."""

    model_config = ConfigDict(extra="forbid")


class ErrorOut(BaseModel):
    error: str = Field(examples=["ValidationError"])
    detail: str = Field(examples=["messages[0].text: String should have at least 1 character"])
    field: str | None = Field(default=None, examples=["messages[0].text"])


ERRORS = {
    401: {"model": ErrorOut, "description": "Missing, expired or forged token."},
    403: {"model": ErrorOut, "description": "The role or the token's subject does not allow it."},
    404: {"model": ErrorOut, "description": "No such subject (or item) in your tenant."},
    409: {"model": ErrorOut, "description": "A concurrent change or a broken business rule."},
    413: {"model": ErrorOut, "description": "The body is too large."},
    422: {"model": ErrorOut, "description": "Invalid input; `field` names it."},
}


class TextIn(Strict):
    type: Literal["text"]
    value: str = Field(min_length=1, max_length=2000)


class NumberIn(Strict):
    type: Literal["number"]
    value: str = Field(pattern=DECIMAL_PATTERN)


class MoneyIn(Strict):
    type: Literal["money"]
    amount: str = Field(pattern=DECIMAL_PATTERN)
    currency: str = Field(pattern=r"^[A-Z]{3}$")


class DateIn(Strict):
    type: Literal["date"]
    value: date


class BooleanIn(Strict):
    type: Literal["boolean"]
    value: bool


class ListIn(Strict):
    type: Literal["list"]
    items: list[Annotated[str, Field(min_length=1, max_length=2000)]] = Field(max_length=100)


ValueIn = Annotated[
    TextIn | NumberIn | MoneyIn | DateIn | BooleanIn | ListIn, Field(discriminator="type")
]


def to_field_value(value: TextIn | NumberIn | MoneyIn | DateIn | BooleanIn | ListIn) -> FieldValue:
    match value:
        case TextIn():
            return TextValue(value.value)
        case NumberIn():
            return NumberValue(Decimal(value.value))
        case MoneyIn():
            return MoneyValue(Decimal(value.amount), value.currency)
        case DateIn():
            return DateValue(value.value)
        case BooleanIn():
            return BooleanValue(value.value)
        case ListIn():
            return ListValue(tuple(value.items))


class EvidenceIn(Strict):
    """Where in a recorded session something was said: the message and the exact quote."""

    session_id: str = Field(min_length=1, max_length=100, examples=["wa-2026-01-14"])
    message_index: int = Field(ge=0, le=10_000, examples=[0])
    quote: str = Field(min_length=1, max_length=2000, examples=["we work with Supplier A"])

    def to_domain(self) -> Evidence:
        return Evidence(self.session_id, self.message_index, self.quote)


class EvidenceOut(BaseModel):
    session_id: str
    message_index: int
    quote: str


class ActorOut(BaseModel):
    kind: str = Field(examples=["staff"])
    id: str = Field(examples=["reviewer-3"])

    @classmethod
    def of(cls, actor: Actor) -> ActorOut:
        return cls(kind=actor.kind.value, id=actor.id)


JsonScalar = str | int | float | bool | None
