"""Which field an agent's recall query asks about: the shipped question heads over the shipped
embedder.

The questions below were written for this test and are not in the training conversations:
they test the heads' behaviour on wordings they never saw, not a word list. The heads abstain
where unsure (out of fold they read about six in ten labelled questions at 0.9 precision), so
each test pins a reading the heads give and that a reader would agree with, and small talk
reading as no field.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.field_reader.head import (
    QUESTIONS_SHIPPED,
    QUESTIONS_SHIPPED_SHA256,
    HeadFileError,
    load_question_heads,
)
from factledger.adapters.field_reader.reader import EmbeddingFieldReader


@pytest.fixture(scope="module")
def reader() -> EmbeddingFieldReader:
    return EmbeddingFieldReader(OnnxEmbedder(), load_question_heads())


def test_the_shipped_question_heads_are_the_pinned_file() -> None:
    assert hashlib.sha256(QUESTIONS_SHIPPED.read_bytes()).hexdigest() == QUESTIONS_SHIPPED_SHA256
    heads = load_question_heads()
    assert {"home_buyer", "patient", "lead", "candidate", "customer"} <= set(heads.kinds)
    # A question may ask about a list field: none is held back from reading.
    assert all(not head.many for head in heads.kinds.values())


def test_a_question_heads_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "question_heads.npz"
    other.write_bytes(QUESTIONS_SHIPPED.read_bytes() + b"\0")
    with pytest.raises(HeadFileError, match="SHA-256"):
        load_question_heads(other)


@pytest.mark.parametrize(
    ("kind", "question", "field"),
    [
        ("candidate", "How long is her notice at the current job?", "notice_period"),
        ("candidate", "What does he expect to be paid?", "salary_expectation"),
        ("candidate", "Which programming languages does she know?", "skills"),
        ("patient", "Is the patient allergic to anything?", "allergies"),
        ("patient", "Which pharmacy should the prescription go to?", "preferred_pharmacy"),
        ("patient", "Who is the patient's GP?", "primary_physician"),
        ("lead", "Which vendor do they use today?", "supplier"),
        ("lead", "Who signs off on the purchase?", "decision_maker"),
        ("home_buyer", "By when do they have to be moved in?", "move_by_date"),
        ("home_buyer", "Any features they refuse to accept in a home?", "deal_breakers"),
    ],
)
async def test_unseen_questions_read_as_the_field_they_ask_about(
    reader: EmbeddingFieldReader, kind: str, question: str, field: str
) -> None:
    assert await reader.read(kind, [question]) == [field]


async def test_small_talk_asks_about_no_field(reader: EmbeddingFieldReader) -> None:
    assert await reader.read("home_buyer", ["Did they enjoy the weekend?"]) == [None]


async def test_a_kind_the_heads_do_not_know_reads_nothing(reader: EmbeddingFieldReader) -> None:
    # No silent guess from another kind's fields: the caller sees the kind is unknown.
    assert not reader.knows("dragon")
    assert await reader.read("dragon", ["Who is the patient's GP?"]) == [None]


async def test_question_heads_over_another_model_are_not_used() -> None:
    other = EmbeddingFieldReader(HashingEmbedder(384), load_question_heads())
    assert not other.knows("patient")
    assert await other.read("patient", ["Is the patient allergic to anything?"]) == [None]


async def test_a_query_embedded_once_reads_its_field_from_that_vector(
    reader: EmbeddingFieldReader,
) -> None:
    vector = await reader.query_vector("How long is her notice at the current job?")
    assert vector is not None
    assert reader.field_of("candidate", vector) == "notice_period"
    assert reader.field_of("dragon", vector) is None
    other = EmbeddingFieldReader(HashingEmbedder(384), load_question_heads())
    assert await other.query_vector("How long is her notice?") is None
    # A vector by another embedder is never read as this one's.
    assert other.field_of("candidate", vector) is None


async def test_the_fields_ranked_for_a_query_start_with_the_one_it_is_sure_of(
    reader: EmbeddingFieldReader,
) -> None:
    vector = await reader.query_vector("How long is her notice at the current job?")
    assert vector is not None
    ranked = reader.ranked_fields("candidate", vector)
    head = load_question_heads().kinds["candidate"]
    # Every field of the kind, none twice and never the no-field class, the sure one first.
    assert sorted(ranked) == sorted(c for c in head.classes if c)
    assert ranked[0] == "notice_period"
    assert reader.ranked_fields("dragon", vector) == ()
    other = EmbeddingFieldReader(HashingEmbedder(384), load_question_heads())
    assert other.ranked_fields("candidate", vector) == ()
