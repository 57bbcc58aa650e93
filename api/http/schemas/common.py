"""Request and response shapes shared by several routers: errors, values, actors, evidence.

Values travel as tagged objects (`{"type": "money", "amount": "1200", "currency": "EUR"}`),
the same shape the ledger's events store; decimals are strings so no float ever rounds them.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi.encoders import jsonable_encoder
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from factledger.domain.errors import InvalidValueError
from factledger.domain.provenance import MAX_QUOTE, Actor, Evidence
from factledger.domain.sessions import MAX_MESSAGES
from factledger.domain.text import UNSAFE_TEXT_RULE, check_json_text, is_safe_text
from factledger.domain.values import (
    CURRENCY,
    FIELD_NAME,
    MAX_ITEMS,
    MAX_TEXT,
    BooleanValue,
    DateValue,
    FieldValue,
    ListValue,
    MoneyValue,
    NumberValue,
    TextValue,
)

# The limits are the domain's (`factledger.domain`); what only the HTTP API restricts is below.
FIELD_PATTERN = FIELD_NAME.pattern
# How a decimal is written in JSON: a string, so no float ever rounds it.
DECIMAL_PATTERN = r"^-?\d{1,18}(\.\d{1,8})?$"
# Session ids the HTTP API accepts: a narrower alphabet and length than the domain's.
MAX_SESSION_ID_CHARS = 100
SESSION_ID_PATTERN = rf"^[A-Za-z0-9._:-]{{1,{MAX_SESSION_ID_CHARS}}}$"
MAX_VERSION = 1_000_000  # profile versions and stream positions a request may name


# The error type `api.http.errors` renders as the fixed rule (it never quotes the input).
UNSAFE_TEXT_ERROR = "unsafe_text"
# The error type of a rule across a body's fields, written here (never from the input):
# `api.http.errors` names the field in its context and says the rule as written.
BODY_RULE_ERROR = "body_rule"


def body_rule(field: str, rule: str) -> PydanticCustomError:
    """An error of a rule that spans fields, blamed on `field`; `rule` says what to send."""
    return PydanticCustomError(BODY_RULE_ERROR, rule, {"field": field})


def _safe_text(text: str) -> str:
    if not is_safe_text(text):
        raise PydanticCustomError(UNSAFE_TEXT_ERROR, UNSAFE_TEXT_RULE)
    return text


def _safe_json(value: Any) -> Any:
    try:
        check_json_text(value, "value")
    except InvalidValueError:
        raise PydanticCustomError(UNSAFE_TEXT_ERROR, UNSAFE_TEXT_RULE) from None
    return value


# Every string a request body carries is `SafeText` (and free JSON is `SafeJson`): text with a
# NUL or a lone surrogate is a 422 naming the field, because no store or encoder holds it.
SafeText = Annotated[str, AfterValidator(_safe_text)]
SafeJson = Annotated[Any, AfterValidator(_safe_json)]


class Strict(BaseModel):
    """Base of request bodies: unknown fields are errors, so typos never pass silently."""

    model_config = ConfigDict(extra="forbid")


class ErrorOut(BaseModel):
    error: str = Field(examples=["ValidationError"])
    detail: str = Field(examples=["messages[0].text: String should have at least 1 character"])
    field: str | None = Field(default=None, examples=["messages[0].text"])


# The shared error answers are documented by reference to `ErrorOut`'s schema, which
# `error_schemas` adds to the document, rather than with `"model": ErrorOut`: FastAPI builds a
# field (a pydantic `TypeAdapter`) for every model response of every route where it is
# declared, 264 of them for these alone, a sixth of the routes' import (ADR 0101), only for
# the OpenAPI document to read.
_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}


def _error(description: str) -> dict[str, object]:
    return {"description": description, "content": _ERROR_CONTENT}


ERRORS = {
    400: _error("The body could not be read (cut off, or not UTF-8)."),
    401: _error("Missing, expired or forged token."),
    403: _error("The role or the token's subject does not allow it."),
    404: _error("No such subject (or item) in your tenant."),
    409: _error("A concurrent change or a broken business rule."),
    413: _error("The body is too large."),
    422: _error("Invalid input; `field` names it."),
    429: _error(
        "Too many requests (per principal, per tenant, or failed tokens per "
        "address); `Retry-After` says when to try again."
    ),
}


def error_schemas(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with `ErrorOut`'s schema among its components (the shared error answers
    refer to it)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schema = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
    # As FastAPI writes every schema of the document: no null values (a null default).
    schemas.setdefault("ErrorOut", jsonable_encoder(schema, exclude_none=True))
    return document


class TextIn(Strict):
    type: Literal["text"]
    value: SafeText = Field(min_length=1, max_length=MAX_TEXT)


class NumberIn(Strict):
    type: Literal["number"]
    value: str = Field(pattern=DECIMAL_PATTERN)


class MoneyIn(Strict):
    type: Literal["money"]
    amount: str = Field(pattern=DECIMAL_PATTERN)
    currency: str = Field(pattern=CURRENCY.pattern)


class DateIn(Strict):
    type: Literal["date"]
    value: date


class BooleanIn(Strict):
    type: Literal["boolean"]
    value: bool


class ListIn(Strict):
    type: Literal["list"]
    items: list[Annotated[SafeText, Field(min_length=1, max_length=MAX_TEXT)]] = Field(
        max_length=MAX_ITEMS
    )


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

    session_id: SafeText = Field(
        min_length=1, max_length=MAX_SESSION_ID_CHARS, examples=["wa-2026-01-14"]
    )
    message_index: int = Field(ge=0, le=MAX_MESSAGES - 1, examples=[0])
    quote: SafeText = Field(
        min_length=1, max_length=MAX_QUOTE, examples=["we work with Supplier A"]
    )

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
