"""The slots a conversation type's guidance adds feed profile fields through the kind's feeds:
the lead's built-in ones for a sales call, a deployment's schema for a support kind."""

from __future__ import annotations

from datetime import UTC, datetime

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.proposals import kind_feeds
from factledger.api.settings import load_settings
from factledger.application.memory.extraction import ExtractionContext, ExtractionRequest
from factledger.application.proposals.candidates import candidates_from
from factledger.application.proposals.schema import DEFAULT_LEAD
from factledger.domain.transcript import Message, Role

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


def fields_proposed(text: str, conversation_type: str, kind: str, feeds: object) -> set[str]:
    transcript = (Message(Role.SUBJECT, text, T0),)
    context = ExtractionContext("acme", kind, "chat", conversation_type)
    facts = RuleExtractor().extract_now(ExtractionRequest(transcript, T0, context=context))
    return {c.feed.field for c in candidates_from(facts, transcript, feeds, "s-1")}  # type: ignore[arg-type]


def test_a_leads_sales_call_feeds_its_built_in_fields() -> None:
    said = "We need to go live by the end of March. Our CFO makes the final call."
    said += " We are also evaluating Northdesk."
    assert fields_proposed(said, "sales_discovery", "lead", DEFAULT_LEAD) == {
        "timeline",
        "decision_maker",
        "competitors",
    }
    # Read as a support ticket, only the default guidance's plan is left
    assert fields_proposed(said, "support_ticket", "lead", DEFAULT_LEAD) == {"purchase_intent"}


def test_a_support_kind_is_fed_as_the_deployment_maps_its_slots() -> None:
    # The example of docs/adr/0018: a `customer` kind fed by the support guidance's slots.
    schemas = {
        "customer": {
            "product": {"type": "text", "slots": ["product"]},
            "open_issue": {"type": "text", "slots": ["issue"]},
            "severity": {"type": "text", "slots": ["severity"]},
            "environment": {"type": "list", "slots": ["environment"]},
            "requested_outcome": {"type": "text", "slots": ["requested_outcome"]},
        }
    }
    feeds = kind_feeds(load_settings(profile_schemas=schemas))["customer"]
    said = "Your Stockroom app keeps logging me out on my iPad. This is urgent."
    said += " We want a refund for May."
    assert fields_proposed(said, "support_ticket", "customer", feeds) == {
        "product",
        "open_issue",
        "environment",
        "severity",
        "requested_outcome",
    }
