"""The HTTP schemas take the domain's limits: at the limit a body validates, one past it is
refused naming the field (the 422's `field`), and the domain agrees at the same boundary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from factledger.api.http.routes.forget import ForgetIn
from factledger.api.http.schemas.common import EvidenceIn, ListIn, MoneyIn, TextIn
from factledger.api.http.schemas.proposals import ApproveIn, ProposalIn, RejectIn
from factledger.api.http.schemas.sessions import MessageIn
from factledger.api.http.schemas.subjects import RegisterSubjectIn
from factledger.application.memory.rules import ID_PATTERN
from factledger.domain.errors import DomainError
from factledger.domain.proposal import MAX_CONDITION, MAX_NOTE, MAX_RATIONALE
from factledger.domain.provenance import MAX_QUOTE, MAX_REASON
from factledger.domain.sessions import MAX_MESSAGES
from factledger.domain.subject import MAX_REFERENCE, legacy_subject_id
from factledger.domain.transcript import MAX_MESSAGE_CHARS
from factledger.domain.values import (
    CURRENCY,
    FIELD_NAME,
    MAX_ITEMS,
    MAX_TEXT,
    ListValue,
    TextValue,
)

PROPOSAL = {"field": "supplier", "origin": "inferred"}


@dataclass(frozen=True)
class Limit:
    model: type[BaseModel]
    body: Callable[[Any], dict[str, Any]]
    at_limit: Any
    past_limit: Any
    field: str  # the error's location, as the 422 names it
    domain: Callable[[Any], object] | None = None  # the domain's own check of the same value


LIMITS = {
    "text": Limit(
        TextIn, lambda v: {"type": "text", "value": v}, "t" * MAX_TEXT, "t" * (MAX_TEXT + 1),
        "value", TextValue,
    ),
    "list-items": Limit(
        ListIn, lambda v: {"type": "list", "items": v}, ["i"] * MAX_ITEMS,
        ["i"] * (MAX_ITEMS + 1), "items", lambda v: ListValue(tuple(v)),
    ),
    "list-item": Limit(
        ListIn, lambda v: {"type": "list", "items": [v]}, "i" * MAX_TEXT, "i" * (MAX_TEXT + 1),
        "items.0", lambda v: ListValue((v,)),
    ),
    "message-index": Limit(
        EvidenceIn, lambda v: {"session_id": "s1", "message_index": v, "quote": "q"},
        MAX_MESSAGES - 1, MAX_MESSAGES, "message_index",
    ),
    "quote": Limit(
        EvidenceIn, lambda v: {"session_id": "s1", "message_index": 0, "quote": v},
        "q" * MAX_QUOTE, "q" * (MAX_QUOTE + 1), "quote",
    ),
    "field": Limit(
        ProposalIn, lambda v: {**PROPOSAL, "field": v}, "f" * 64, "f" * 65, "field",
    ),
    "condition": Limit(
        ProposalIn, lambda v: {**PROPOSAL, "condition": v}, "c" * MAX_CONDITION,
        "c" * (MAX_CONDITION + 1), "condition",
    ),
    "rationale": Limit(
        ProposalIn, lambda v: {**PROPOSAL, "rationale": v}, "r" * MAX_RATIONALE,
        "r" * (MAX_RATIONALE + 1), "rationale",
    ),
    "approval-note": Limit(
        ApproveIn, lambda v: {"note": v}, "n" * MAX_NOTE, "n" * (MAX_NOTE + 1), "note",
    ),
    "reject-reason": Limit(
        RejectIn, lambda v: {"reason": v}, "r" * MAX_REASON, "r" * (MAX_REASON + 1), "reason",
    ),
    "forget-reason": Limit(
        ForgetIn, lambda v: {"field": "supplier", "reason": v}, "r" * MAX_REASON,
        "r" * (MAX_REASON + 1), "reason",
    ),
    "forget-memory-id": Limit(
        ForgetIn, lambda v: {"memory_id": v, "reason": "asked"}, "m" * 100, "m" * 101,
        "memory_id", lambda v: ID_PATTERN.fullmatch(v) or _refuse(),
    ),
    "message-text": Limit(
        MessageIn, lambda v: {"role": "subject", "text": v}, "m" * MAX_MESSAGE_CHARS,
        "m" * (MAX_MESSAGE_CHARS + 1), "text",
    ),
    "external-ref": Limit(
        RegisterSubjectIn, lambda v: {"kind": "lead", "external_ref": v}, "r" * MAX_REFERENCE,
        "r" * (MAX_REFERENCE + 1), "external_ref", lambda v: legacy_subject_id("t", "lead", v),
    ),
}  # fmt: skip


def _refuse() -> None:
    raise ValueError("refused")


@pytest.mark.parametrize("limit", LIMITS.values(), ids=LIMITS.keys())
def test_a_value_at_the_domain_limit_passes_and_one_past_it_is_named(limit: Limit) -> None:
    limit.model.model_validate(limit.body(limit.at_limit))
    with pytest.raises(ValidationError) as refused:
        limit.model.model_validate(limit.body(limit.past_limit))
    assert [".".join(map(str, e["loc"])) for e in refused.value.errors()] == [limit.field]


@pytest.mark.parametrize(
    "limit",
    [v for v in LIMITS.values() if v.domain],
    ids=[k for k, v in LIMITS.items() if v.domain],
)
def test_the_domain_draws_the_same_line(limit: Limit) -> None:
    assert limit.domain is not None
    limit.domain(limit.at_limit)
    with pytest.raises((DomainError, ValueError)):
        limit.domain(limit.past_limit)


def test_patterns_are_the_domains() -> None:
    field = ProposalIn.model_json_schema()["properties"]["field"]
    assert field["pattern"] == FIELD_NAME.pattern
    currency = MoneyIn.model_json_schema()["properties"]["currency"]
    assert currency["pattern"] == CURRENCY.pattern
