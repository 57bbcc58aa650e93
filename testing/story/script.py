"""The product story's data: who, when, what was said, what the model proposes, who decided.

A lead says in January (WhatsApp) they work with Supplier A, on a budget, and might buy
"next quarter, if the pricing works"; in March (voice) that they moved to Supplier B; in June
(chat) that it was the late deliveries. The product's model proposes from every session, the
lead confirms the intent in the March call, a reviewer approves the facts and rejects an
inference; in July the lead asks to forget the reason. `steps` plays it; this module only
holds what the steps need, so the demo, the tests and the secrets checks read the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.domain.provenance import Actor, ActorKind, Evidence
from factledger.domain.transcript import Channel, Role

TENANT, KIND, REF = "acme", "lead", "lead-0042"
# The product's own model, as `api.bootstrap.proposals.model_actor` names the default one.
MODEL = Actor(ActorKind.MODEL, f"rule@{RuleExtractor.VERSION}")
REVIEWER = "reviewer-07"
LEAD = Actor(ActorKind.SUBJECT, REF)

JAN = datetime(2026, 1, 12, 10, 0, tzinfo=UTC)
JAN_REVIEW = datetime(2026, 1, 13, 9, 0, tzinfo=UTC)
MARCH = datetime(2026, 3, 3, 15, 0, tzinfo=UTC)
MARCH_REVIEW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
JUNE = datetime(2026, 6, 18, 11, 0, tzinfo=UTC)
JUNE_REVIEW = datetime(2026, 6, 19, 9, 0, tzinfo=UTC)
JULY = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

Month = Literal["January", "March", "June", "July"]

INTENT_QUOTE = "Maybe next quarter, if the pricing works."  # the whole sentence
CONDITION = "if the pricing works"


@dataclass(frozen=True, slots=True)
class StorySession:
    """One interaction with the lead, as the agent's channel saw it."""

    session_id: str
    channel: Channel
    at: datetime
    lines: tuple[tuple[Role, str], ...]
    summary: str


JANUARY_CHAT = StorySession(
    "wa-2026-01-12",
    Channel.WHATSAPP,
    JAN,
    (
        (Role.AGENT, "Hi! Who supplies your packaging today?"),
        (Role.SUBJECT, "We work with Supplier A at the moment. Our budget is 40k a year."),
        (Role.AGENT, "Would you consider switching to us?"),
        (Role.SUBJECT, INTENT_QUOTE),
    ),
    "WhatsApp chat about packaging suppliers and a possible switch",
)
MARCH_CALL = StorySession(
    "call-2026-03-03",
    Channel.VOICE,
    MARCH,
    (
        (Role.AGENT, "Still working with Supplier A?"),
        (Role.SUBJECT, "No, we moved to Supplier B last month. We now work with Supplier B."),
        (Role.AGENT, "And the plan for next quarter, is it still on?"),
        (Role.SUBJECT, "Yes, that still holds, if the pricing works."),
    ),
    "Call: supplier change and the purchase plan",
)
JUNE_CHAT = StorySession(
    "chat-2026-06-18",
    Channel.CHAT,
    JUNE,
    (
        (Role.AGENT, "Why did you leave Supplier A, if I may ask?"),
        (Role.SUBJECT, "Their deliveries kept arriving late."),
    ),
    "Chat about why they left their previous supplier",
)
SESSIONS = (JANUARY_CHAT, MARCH_CALL, JUNE_CHAT)

# Also said by the lead in January, but only where a safety filter screens messages (short-term
# memory): it must never reach a buffer, the ledger, a backend or a log.
WITHHELD = "You can charge my card 4111 1111 1111 1111 for the deposit."
WITHHELD_IN = JANUARY_CHAT.session_id


@dataclass(frozen=True, slots=True)
class StoryChange:
    """A change the product's model proposes from a session; `name` is how the story and its
    callers refer to it, `field` where the model puts it (the `lead` kind's default feeds)."""

    name: str
    field: str
    session: StorySession


SUPPLIER_A = StoryChange("supplier_a", "supplier", JANUARY_CHAT)
BUDGET = StoryChange("budget", "budget", JANUARY_CHAT)  # nobody decides it in the story
INTENT = StoryChange("intent", "purchase_intent", JANUARY_CHAT)
# Derived from the budget and "if the pricing works": nobody said it.
INFERENCE = StoryChange("inference", "insights", JANUARY_CHAT)
SUPPLIER_B = StoryChange("supplier_b", "supplier", MARCH_CALL)
REASON = StoryChange("reason", "complaints", JUNE_CHAT)
CHANGES = (SUPPLIER_A, BUDGET, INTENT, INFERENCE, SUPPLIER_B, REASON)

INTENT_CONFIRMATION = Evidence(MARCH_CALL.session_id, 3, "Yes, that still holds")
REJECTION_REASON = "an inference, not something the lead said"
FORGET_REASON = "the lead asked"

# Every text said in a session or held by a profile: none may ever appear in a log line.
SECRETS = (
    *(text for session in SESSIONS for _, text in session.lines),
    CONDITION,
    WITHHELD,
    "4111 1111",
)
