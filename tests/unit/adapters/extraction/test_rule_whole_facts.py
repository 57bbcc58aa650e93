"""A slot fact keeps the verbless phrase said with it about something of the subject's
("for our crates"), instead of a fragment note of its own. Wording unlike the labelled sets."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.application.memory.extraction import ExtractionRequest, KnownFact
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

WHEN = datetime(2026, 6, 9, 12, 0, tzinfo=UTC)
EXTRACTOR = RuleExtractor()


def notes(said: str, known: tuple[KnownFact, ...] = ()) -> list[tuple[str | None, str]]:
    request = ExtractionRequest([Message(Role.SUBJECT, said)], WHEN, known)
    return [(f.slot, f.text) for f in EXTRACTOR.extract_now(request)]


@pytest.mark.parametrize(
    ("said", "slot", "note"),
    [
        ("We work with Gannet Crates for our apples.", "supplier", "for their apples"),
        ("I live in Wexford with my aunt.", "location", "with their aunt"),
        ("We order from Lintel Stone for our garden walls.", "supplier", "for their garden walls"),
    ],
)
def test_the_phrase_stays_with_its_fact(said: str, slot: str, note: str) -> None:
    facts = notes(said)
    assert len(facts) == 1
    assert facts[0][0] == slot
    assert facts[0][1].endswith(note)


def test_a_clause_with_its_own_verb_stays_a_note_of_its_own() -> None:
    facts = notes("We work with Gannet Crates for our apples, and our team has grown a lot.")
    assert ("supplier", "works with Gannet Crates for their apples") in facts
    assert any(slot is None and "team has grown" in text for slot, text in facts)


def test_a_phrase_about_nothing_of_theirs_is_left_out_as_before() -> None:
    assert notes("I moved to Tralee for the new job.") == [("location", "moved to Tralee")]


def test_the_kept_phrase_does_not_change_the_value_or_the_update() -> None:
    known = (KnownFact("m1", "works with Heron Sacks", "supplier"),)
    request = ExtractionRequest(
        [Message(Role.SUBJECT, "We now work with Gannet Crates for our apples.")], WHEN, known
    )
    [fact] = EXTRACTOR.extract_now(request)
    assert fact.value == "Gannet Crates"
    assert fact.relation is RelationKind.UPDATES
    assert list(fact.related_to) == ["m1"]
