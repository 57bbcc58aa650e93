"""Helpers of the rule extractor: relative dates and notes in the third person."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factledger.adapters.extraction.rules.dates import annotate, find_dates, strip_dates
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.rules.text import (
    carry_speaker,
    expand_contractions,
    sentences,
    third_person,
)
from factledger.application.memory.extraction import ExtractionRequest, KnownFact
from factledger.domain.transcript import Message, Role

TUESDAY = datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("words", "anchor", "label", "day"),
    [
        ("next month", datetime(2026, 12, 15, tzinfo=UTC), "2027-01", date(2027, 1, 1)),
        ("last month", datetime(2026, 1, 31, tzinfo=UTC), "2025-12", date(2025, 12, 1)),
        ("in a month", datetime(2026, 1, 31, tzinfo=UTC), "2026-02-28", date(2026, 2, 28)),
        ("next quarter", datetime(2026, 11, 2, tzinfo=UTC), "2027-Q1", date(2027, 1, 1)),
        ("last quarter", datetime(2026, 2, 2, tzinfo=UTC), "2025-Q4", date(2025, 10, 1)),
        ("this quarter", TUESDAY, "2026-Q1", date(2026, 1, 1)),
        ("next week", TUESDAY, "week of 2026-03-16", date(2026, 3, 16)),
        ("next Tuesday", TUESDAY, "2026-03-17", date(2026, 3, 17)),
        ("last Tuesday", TUESDAY, "2026-03-03", date(2026, 3, 3)),
        ("this Friday", TUESDAY, "2026-03-13", date(2026, 3, 13)),
        ("the day before yesterday", TUESDAY, "2026-03-08", date(2026, 3, 8)),
        ("a couple of weeks ago", TUESDAY, "2026-02-24", date(2026, 2, 24)),
        ("in 3 years", TUESDAY, "2029-03-10", date(2029, 3, 10)),
        ("tonight", TUESDAY, "2026-03-10", date(2026, 3, 10)),
    ],
)
def test_relative_dates_resolve(words: str, anchor: datetime, label: str, day: date) -> None:
    [mention] = find_dates(f"We decided that {words}, really.", anchor)
    assert (mention.words, mention.label, mention.day) == (words, label, day)


@pytest.mark.parametrize(
    ("said", "anchor", "label"),
    [
        # The coming season, the one under way, and winter across the new year.
        ("We will launch in spring.", datetime(2026, 2, 2, tzinfo=UTC), "spring 2026"),
        ("We will launch in spring.", datetime(2026, 7, 1, tzinfo=UTC), "spring 2027"),
        ("We are busy this summer.", datetime(2026, 7, 1, tzinfo=UTC), "summer 2026"),
        ("Ask me next summer.", datetime(2026, 7, 1, tzinfo=UTC), "summer 2027"),
        ("It is quiet this winter.", datetime(2026, 1, 15, tzinfo=UTC), "winter 2025"),
        ("It snowed a lot last winter.", datetime(2026, 1, 15, tzinfo=UTC), "winter 2024"),
        ("We should be done by fall.", TUESDAY, "autumn 2026"),
        # Told in the past tense, a plain season is the latest one.
        ("We moved over the summer.", datetime(2026, 11, 16, tzinfo=UTC), "summer 2026"),
        ("We opened in spring.", datetime(2026, 7, 1, tzinfo=UTC), "spring 2026"),
    ],
)
def test_seasons_resolve_by_tense(said: str, anchor: datetime, label: str) -> None:
    [mention] = find_dates(said, anchor)
    assert mention.label == label


def test_annotate_and_strip_keep_the_rest_of_the_text() -> None:
    text = "Tomorrow we sign, and next month we launch."
    mentions = find_dates(text, TUESDAY)
    assert annotate(text, mentions) == (
        "Tomorrow (2026-03-11) we sign, and next month (2026-04) we launch."
    )
    assert strip_dates(text, mentions) == "we sign, and we launch."


def test_words_that_only_look_like_dates_are_left_alone() -> None:
    assert find_dates("The last week of term was fun; next steps are unclear.", TUESDAY) == []


@pytest.mark.parametrize(
    ("said", "note"),
    [
        ("I love hiking with my dog.", "loves hiking with their dog"),
        ("We're moving to a bigger office.", "is moving to a bigger office"),
        ("I don't eat meat.", "does not eat meat"),
        ("I've been painting a lot.", "has been painting a lot"),
        ("I really enjoy it when my team wins.", "really enjoys it when their team wins"),
        (
            "When I was young, my mom took me sailing.",
            "When the subject was young, their mom took them sailing",
        ),
        ("I watch movies.", "watches movies"),
        ("I try to study every day.", "tries to study every day"),
    ],
)
def test_first_person_becomes_a_neutral_note(said: str, note: str) -> None:
    assert third_person(said) == note


def test_sentences_survive_abbreviations_and_typographic_apostrophes() -> None:
    assert sentences("Dr. Lee said hi. I\u2019m fine! Are you?") == [
        "Dr. Lee said hi.",
        "I'm fine!",
        "Are you?",
    ]


def test_contractions_expand_for_pattern_matching() -> None:
    assert expand_contractions("We've moved; I'm sure we'll stay. Don't worry.") == (
        "We have moved; I am sure we will stay. Do not worry."
    )


ROLES = st.sampled_from(list(Role))
TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200
) | st.sampled_from(
    [
        "We switched to Supplier B because Supplier A was late.",
        "Maybe next quarter, if the pricing works.",
        "Would you like to upgrade to the Pro plan?",
        "I no longer like cold calls. Our budget is now 20k.",
        "Because",
        "If",
        "since",
        "",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ROLES, TEXT), max_size=6))
def test_any_transcript_yields_well_formed_facts_from_the_subject_only(
    messages: list[tuple[Role, str]],
) -> None:
    known = (KnownFact("m1", "works with Supplier A", "supplier"),)
    transcript = [Message(role, text) for role, text in messages]
    facts = RuleExtractor().extract_now(ExtractionRequest(transcript, TUESDAY, known))
    keys = [f.key for f in facts]
    assert keys == [f"f{i}" for i in range(len(facts))]
    subject = {i for i, m in enumerate(transcript) if m.role is Role.SUBJECT}
    for fact in facts:
        assert fact.text
        assert '"' not in fact.text
        assert set(fact.source_indexes) & subject
        assert set(fact.source_indexes) <= set(range(len(transcript)))
        assert set(fact.related_to) <= set(keys) | {"m1"}
        assert fact.key not in fact.related_to


@pytest.mark.parametrize(
    ("said", "seen"),
    [
        ("I left Hooli and joined Pied Piper", "I left Hooli and I joined Pied Piper"),
        ("We sold the van and then bought a truck", "We sold the van and then we bought a truck"),
        ("I love hiking and biking", "I love hiking and biking"),
        ("The road was closed and blocked", "The road was closed and blocked"),
    ],
)
def test_a_second_past_verb_keeps_the_speaker(said: str, seen: str) -> None:
    assert carry_speaker(said) == seen
