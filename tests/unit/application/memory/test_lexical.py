"""The keyword side of memories-mode scoring: labels, source sentences, coverage, fusion."""

from __future__ import annotations

import pytest

from factledger.application.memory.lexical import (
    LEXICAL_WEIGHT,
    answered_questions,
    coverage,
    document_frequency,
    fused_score,
    idf_weights,
    keyword_source,
    keywords,
    lexical_terms,
    query_terms,
    slot_words,
    source_text,
    subject_label,
    vector_text,
)
from factledger.domain.transcript import Message, Role


def test_a_label_prefixes_the_vector_text_only_when_given() -> None:
    assert vector_text("Collects stamps", "Ingrid") == "Ingrid: Collects stamps"
    assert vector_text("Collects stamps", None) == "Collects stamps"


@pytest.mark.parametrize(
    ("slot", "words"),
    [
        ("supplier", "supplier"),
        ("job_title", "job title"),
        ("allergy:tree_nuts", "allergy"),
        ("intent:supplier", None),
        ("intent:open_a_store", None),
        (None, None),
        ("", None),
    ],
)
def test_a_slot_is_named_in_words_and_an_intent_names_none(
    slot: str | None, words: str | None
) -> None:
    assert slot_words(slot) == words


def test_the_slot_name_follows_the_label_in_the_vector_text() -> None:
    assert vector_text("moved to Lucca", None, "location") == "location: moved to Lucca"
    assert vector_text("moved to Lucca", "Ingrid", "location") == "Ingrid, location: moved to Lucca"
    assert vector_text("may open a shop", None, "intent:shop") == "may open a shop"


def test_terms_hold_the_slot_name() -> None:
    terms = lexical_terms("moved to Lucca", "", None, "job_title")

    assert {"job", "title", "lucca"} <= set(terms)


@pytest.mark.parametrize("metadata", [None, {}, {"subject_label": "  "}, {"subject_label": 3}])
def test_a_missing_blank_or_non_text_label_is_no_label(metadata: dict[str, object] | None) -> None:
    assert subject_label(metadata) is None  # type: ignore[arg-type]


def test_the_source_is_the_subjects_own_sentences_never_the_agents() -> None:
    transcript = [Message(Role.AGENT, "Who makes your boxes?"), Message(Role.SUBJECT, "Fernhill")]

    assert source_text(transcript, (0, 1, 1, 7)) == "Fernhill"


def test_the_question_a_source_sentence_answers_is_found_with_it() -> None:
    transcript = [
        Message(Role.AGENT, "Which courier takes your parcels?"),
        Message(Role.SUBJECT, "Mostly Hermes."),
        Message(Role.AGENT, "Noted, thanks."),
        Message(Role.SUBJECT, "And we pay monthly."),
        Message(Role.SUBJECT, "By card?"),
    ]

    assert answered_questions(transcript, (1,)) == "Which courier takes your parcels?"
    # Not an answer: the agent's line before it is no question, or the line before is the
    # subject's own, or there is no line before, or the source is not the subject's.
    assert answered_questions(transcript, (3, 4, 0)) == ""
    assert keyword_source(transcript, (1, 3)) == (
        "Mostly Hermes. And we pay monthly. Which courier takes your parcels?"
    )
    assert set(keywords("courier parcels Hermes")) <= set(
        lexical_terms("uses Hermes", keyword_source(transcript, (1,)), None)
    )


def test_query_and_fact_keywords_fold_inflections_alike() -> None:
    assert query_terms("Which parcels were shipped?") == keywords("parcel shipping")
    assert {"ship", "parcel"} <= set(lexical_terms("ships parcels", "", None))


def test_a_persons_name_in_a_question_meets_no_note_about_another_word() -> None:
    # The lemmatiser alone reads the name "Maria" as the Latin plural of "mare".
    asked = query_terms("What is Maria planning?")

    assert "maria" in asked
    assert not set(asked) & set(lexical_terms("bought a mare", "We bought a mare.", None))


def test_terms_hold_the_label_the_fact_and_the_source() -> None:
    terms = lexical_terms("Buys packaging", "we order cartons", "Ingrid")

    assert set(terms) == {"ingrid", "buy", "packaging", "order", "carton"}


def test_coverage_weighs_rare_words_more_than_common_ones() -> None:
    documents = [{"carton", "monthly"}, {"monthly"}, {"monthly"}, {"weather"}]
    terms = query_terms("monthly cartons")
    weights = idf_weights(terms, document_frequency(terms, documents), len(documents))

    rare, common = coverage(terms, weights, {"carton"}), coverage(terms, weights, {"monthly"})

    assert rare > 0.5 > common > 0.0
    assert coverage(terms, weights, {"carton", "monthly"}) == pytest.approx(1.0)
    assert coverage([], [], {"cartons"}) == 0.0


def test_the_fused_score_keeps_a_pure_vector_match_and_never_passes_one() -> None:
    assert fused_score(0.42, 0.0) == 0.42
    assert fused_score(0.2, 1.0) == pytest.approx(0.2 + LEXICAL_WEIGHT)
    assert fused_score(0.95, 1.0) == 1.0
