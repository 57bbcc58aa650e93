"""What indexes our records: their values as words, never their keys, ids or timestamps."""

from __future__ import annotations

import re

from factledger.application.proposals.plan import where_said
from factledger.application.sync.search_text import (
    profile_search_text,
    proposal_search_text,
    summary_search_text,
    value_words,
)

CHANGE_ID = "df728997-1f9b-5d58-ac11-1d6eaed6c704"
PROPOSAL: dict[str, object] = {
    "based_on_version": 4,
    "change_id": CHANGE_ID,
    "condition": None,
    "evidence": {"message_index": 7, "quote": "We use Salesforce as our CRM.", "session_id": "s-0"},
    "field": "crm_tool",
    "operation": "set",
    "origin": "stated",
    "proposed_at": "2026-12-01T06:20:40.673971+00:00",
    "proposed_by": {"id": "rule@3", "kind": "model"},
    "rationale": "new value of crm tool",
    "value": {"type": "text", "value": "Salesforce"},
}
# What a rendering must never hold: the JSON's keys and punctuation, ids, versions and times.
UNSEARCHED = re.compile(
    r"[{}\"]|change_id|proposed_at|based_on|message_index|rule@3|2026-12-01|\b4\b|\b7\b"
)


def test_a_proposal_is_indexed_by_its_field_value_quote_and_rationale() -> None:
    text = proposal_search_text(PROPOSAL)

    assert text == "crm tool: Salesforce. We use Salesforce as our CRM. new value of crm tool."
    assert CHANGE_ID not in text
    assert not UNSEARCHED.search(text)


def test_a_proposal_is_indexed_without_its_rationales_pointer_to_the_message() -> None:
    # The built-in model's rationale names the session and message it read (ids), as
    # `proposals.plan` writes it; the value it replaces is words and is kept.
    said = f"update of crm tool: said{where_said('s-0', 7)}; replaces HubSpot"
    text = proposal_search_text({**PROPOSAL, "rationale": said})

    assert text == (
        "crm tool: Salesforce. We use Salesforce as our CRM. update of crm tool: said; "
        "replaces HubSpot."
    )
    assert not UNSEARCHED.search(str(text))


def test_a_proposal_keeps_its_condition_and_says_what_it_changes() -> None:
    conditional = {**PROPOSAL, "condition": "if the pricing works"}
    removal = {**PROPOSAL, "operation": "unset", "value": None, "evidence": None}
    addition = {**PROPOSAL, "operation": "append", "value": {"type": "list", "items": ["a", "b"]}}

    assert str(proposal_search_text(conditional)).startswith(
        "crm tool: Salesforce, if the pricing works. "
    )
    assert proposal_search_text(removal) == "crm tool: remove. new value of crm tool."
    assert str(proposal_search_text(addition)).startswith("crm tool: add a, b. ")


def test_an_erased_proposal_is_indexed_by_its_field_alone() -> None:
    # Forgotten: its value, condition, evidence and rationale read back as None (ADR 0003).
    erased = {**PROPOSAL, "value": None, "condition": None, "evidence": None, "rationale": None}

    assert proposal_search_text(erased) == "crm tool."
    assert proposal_search_text({"change_id": CHANGE_ID}) is None


def test_value_payloads_read_as_their_words() -> None:
    assert value_words({"type": "money", "amount": "40000", "currency": "EUR"}) == "40000 EUR"
    assert value_words({"type": "boolean", "value": True}) == "yes"
    assert value_words({"type": "number", "value": "12"}) == "12"
    assert value_words({"type": "list", "items": ["flour", "yeast"]}) == "flour, yeast"
    assert value_words(None) == ""


def test_a_profile_version_is_indexed_by_each_field_and_value() -> None:
    profile = {
        "profile_version": 3,
        "fields": {
            "purchase_intent": {
                "value": {"type": "text", "value": "renew"},
                "text": "renew",
                "condition": "if the pricing works",
                "origin": "stated",
                "since_version": 9,
                "confirmed_at": "2026-03-03T10:00:00+00:00",
                "evidence_session": "call-2",
            },
            "supplier": {"value": {"type": "text", "value": "Supplier B"}, "text": "Supplier B"},
        },
    }

    text = profile_search_text(profile)

    assert text == "purchase intent: renew, if the pricing works; supplier: Supplier B"
    assert profile_search_text({"profile_version": 4, "fields": {}}) is None


def test_a_summary_is_indexed_by_its_words_without_ids_or_times() -> None:
    summary = {
        "text": "renewal call, asked for a discount",
        "ticket": CHANGE_ID,
        "next_call": "2026-03-04T09:00:00+01:00",
        "topics": ["pricing", "delivery"],
        "digest": "9f86d081884c7d659a2feaa0c55ad015",
        "seats": 12,
    }

    text = summary_search_text("voice", summary)

    assert text == "voice: renewal call, asked for a discount. pricing. delivery. 12"
    assert summary_search_text("chat", {"ticket": CHANGE_ID}) is None
    assert summary_search_text("chat", None) is None
