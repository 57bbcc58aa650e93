"""The rule extractor on how things are said: tenses, small talk, requests about memory,
fragments, note shape and reasons given later. Wording here is not the labelled set's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.rules.notes import is_fragment, without_filler
from factledger.adapters.extraction.rules.tenses import simple_present
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, KnownFact
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

WHEN = datetime(2026, 6, 9, 12, 0, tzinfo=UTC)
EXTRACTOR = RuleExtractor()


def extract(*messages: tuple[str, str], known: tuple[KnownFact, ...] = ()) -> list[ExtractedFact]:
    transcript = [Message(Role(role), text) for role, text in messages]
    return EXTRACTOR.extract_now(ExtractionRequest(transcript, WHEN, known))


@pytest.mark.parametrize(
    ("said", "plain"),
    [
        ("we are still using Acme Tools", "we use Acme Tools"),
        ("I have been living in Turin", "I live in Turin"),
        ("we had been ordering from Polar Ice", "we order from Polar Ice"),
        ("we have used Delta Desk", "we use Delta Desk"),
        ("we have got 30 people", "we have 30 people"),
        ("we have since gone over to Nova", "we have gone over to Nova"),
        ("we are thinking about a move", "we are thinking about a move"),  # not a slot verb
    ],
)
def test_slot_verbs_are_put_in_the_simple_present(said: str, plain: str) -> None:
    assert simple_present(said) == plain


@pytest.mark.parametrize(
    ("said", "slot", "value"),
    [
        ("We've been getting our glass from Clearwater Glazing.", "supplier", "Clearwater Glazing"),
        ("I'm currently working for Vellum Labs.", "employer", "Vellum Labs"),
        ("Ashcroft Tiles is who we buy from.", "supplier", "Ashcroft Tiles"),
        ("The uniforms are supplied by Tailor Row.", "supplier", "Tailor Row"),
        ("Our office is based out of Aarhus.", "location", "Aarhus"),
        ("Headcount stands at 120.", "team_size", "120"),
    ],
)
def test_other_tenses_and_indirect_wording_fill_slots(said: str, slot: str, value: str) -> None:
    facts = [f for f in extract(("subject", said)) if f.slot == slot]
    assert [f.value for f in facts] == [value]


@pytest.mark.parametrize(
    "said",
    [
        "Pretty good so far, thanks!",
        "Long day here, as always.",
        "Hope the conference went well!",
        "Sorry about the late answer, it's been manic.",
        "Could you forget the part about my landlord?",
        "Please don't keep a record of my home number.",
        "Ignore what I said about Zephyr Systems.",
    ],
)
def test_small_talk_and_requests_about_memory_are_no_facts(said: str) -> None:
    assert extract(("subject", said)) == []


def test_a_request_to_forget_leaves_the_next_sentence_alone() -> None:
    facts = extract(("subject", "Please forget my old number. We buy from Larch Timber now."))
    assert [f.value for f in facts] == ["Larch Timber"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("Mainly the returns.", True),
        ("Only in the mornings, I guess.", True),
        ("The rota changes every week.", False),
        ("Went to the trade fair on Monday.", False),
        ("Just finishing the audit.", False),
    ],
)
def test_a_fragment_has_no_verb_to_carry_a_statement(text: str, fragment: bool) -> None:
    assert is_fragment(text) is fragment


def test_a_fragment_reply_is_no_note() -> None:
    facts = extract(("agent", "Which depot do you use?"), ("subject", "The northern one, mostly."))
    assert facts == []


def test_a_note_drops_filler_and_keeps_the_partner() -> None:
    [fact] = extract(("subject", "Honestly, my brother and I basically run the stall on Sundays."))
    assert fact.text == "runs the stall on Sundays with their brother"
    assert without_filler("We do, you know, mostly repairs") == "We do mostly repairs"


def test_an_answer_to_why_extends_the_change_with_what_it_replaced() -> None:
    facts = extract(
        ("subject", "We switched to Beryl Bank."),
        ("agent", "What made you switch?"),
        ("subject", "Mainly the fees."),
        known=(KnownFact("m1", "works with Granite Bank", "supplier"),),
    )
    change = next(f for f in facts if f.slot == "supplier")
    [reason] = [f for f in facts if f.relation is RelationKind.EXTENDS]
    assert reason.related_to == (change.key,)
    assert reason.text == "switched to Beryl Bank, previously Granite Bank, because of the fees"
    assert reason.source_indexes == (0, 2)


def test_a_reason_that_points_back_explains_the_latest_change() -> None:
    facts = extract(
        ("subject", "We are on the Solo plan. We switched to Kite Energy last week."),
        ("subject", "That was mostly due to the tariffs."),
    )
    change = next(f for f in facts if f.slot == "supplier")
    [reason] = [f for f in facts if f.relation is RelationKind.EXTENDS]
    assert reason.related_to == (change.key,)
    assert reason.text.endswith("due to the tariffs")
    assert not any(f.text.lower().startswith("that was") for f in facts)


def test_a_reason_with_no_change_to_explain_is_still_kept() -> None:
    [fact] = extract(("subject", "Because the roads were closed, sadly."))
    assert fact.text.startswith("because the roads were closed")


def test_a_change_said_twice_is_one_fact_in_the_words_of_the_state() -> None:
    facts = extract(
        ("subject", "We moved to Osprey Paper in May. We now work with Osprey Paper."),
        known=(KnownFact("m1", "works with Wren Paper", "supplier"),),
    )
    [change] = [f for f in facts if f.slot == "supplier"]
    assert change.text == "works with Osprey Paper"
    assert (change.relation, change.related_to) == (RelationKind.UPDATES, ("m1",))
    assert not any(f.slot == "location" for f in facts)  # the namespace speaks of suppliers
