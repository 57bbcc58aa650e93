"""The shipped judge (heads over the packaged embedder) on sentences none of its corpus holds."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import (
    PACKAGED_HEADS,
    PACKAGED_HEADS_SHA256,
    EmbedderMismatchError,
    LearnedJudge,
)
from factledger.application.judgement.types import Judgement, Reply, Statement
from factledger.domain.transcript import Message, Role


@pytest.fixture(scope="module")
def judge() -> LearnedJudge:
    return LearnedJudge.packaged()


async def test_sentences_are_judged_by_whom_they_are_about_and_what_they_ask(
    judge: LearnedJudge,
) -> None:
    said = [
        "Could you please delete the note about my blood pressure?",
        "My wife drives a Honda Civic.",
        "We currently pay about 900 a month for hosting.",
        "Thanks, have a lovely afternoon!",
        "Sorry, I got that wrong: it's five people, not six.",
        "We might expand to Lisbon if funding comes through.",
    ]
    forget, spouse, hosting, thanks, corrected, hedged = await judge.judge(said)

    assert [j.forget_request for j in (forget, hosting)] == [True, False]
    assert spouse.statement is Statement.THIRD_PARTY
    assert hosting.statement is Statement.SELF
    assert hosting.is_fact_about_subject
    assert thanks.statement is Statement.SMALL_TALK
    assert [j.correction for j in (corrected, hosting)] == [True, False]
    assert [j.hedged for j in (hedged, hosting)] == [True, False]
    assert await judge.judge([]) == []


def _answers(j: Judgement) -> tuple[Statement, bool, bool, bool]:
    return j.statement, j.hedged, j.forget_request, j.correction


def _probabilities(j: Judgement) -> tuple[float, float, float, float]:
    return j.statement_p, j.hedged_p, j.forget_p, j.correction_p


# A handful of transcripts' subject lines, sentence by sentence, of mixed lengths (a batch of
# them would be padded) with a request to forget, a hedge and a correction among them.
TRANSCRIPTS = (
    (
        "Hi, this is Marta from Vellum Print.",
        "We print about four thousand catalogues a month for garden centres.",
        "Please don't keep my mobile number on file.",
        "Our budget might go up to 8k next quarter.",
    ),
    (
        "Sorry, I said Tuesday earlier but I meant Thursday.",
        "My husband handles the invoices.",
        "Forget the address I gave you last week.",
        "Thanks!",
    ),
    (
        "We moved the whole team to Kraków in March.",
        "I think we'll need three more licences, maybe four.",
        "Could you erase what I told you about my diagnosis?",
    ),
)


async def test_a_transcripts_sentences_judged_together_get_each_ones_answers_alone(
    judge: LearnedJudge,
) -> None:
    # The forget screen asks for a transcript's sentences in one call: each answer must be
    # the one the sentence gets alone (no vector cache on either side to hide a difference).
    # The vectors are the same bit for bit (one inference run per text: int8 activations
    # share one range per run); the heads' matrix product over several rows may round the
    # last bit of a probability otherwise, hence the tolerance, far below what a shared
    # range moves them (hundredths).
    # The shipped reader of requests to forget reads each sentence alone too (ADR 0166).
    reader = judge.forget_reader
    together = LearnedJudge(OnnxEmbedder(cached_vectors=0), judge.heads, forget_reader=reader)
    alone = LearnedJudge(OnnxEmbedder(cached_vectors=0), judge.heads, forget_reader=reader)
    for sentences in TRANSCRIPTS:
        one_by_one = [(await alone.judge([sentence]))[0] for sentence in sentences]
        judged = await together.judge(sentences)
        assert [_answers(j) for j in judged] == [_answers(j) for j in one_by_one]
        assert [_probabilities(j) for j in judged] == [
            pytest.approx(_probabilities(j), abs=1e-6) for j in one_by_one
        ]
    assert [j.forget_request for j in await together.judge(TRANSCRIPTS[1])] == [
        False,
        False,
        True,
        False,
    ]


async def test_the_heads_reply_only_answer_head_reads_replies_in_several_languages(
    judge: LearnedJudge,
) -> None:
    # The packaged judge reads replies with its pair judge (tested on its own); the heads'
    # answer head is what a judge without one reads them with.
    judge = LearnedJudge(judge.embedder, judge.heads)
    question = "Is your plan still Basic?"
    replies = {
        "Yes, that's it.": Reply.YES,
        "Oui, exact.": Reply.YES,
        "Ja, stimmt.": Reply.YES,
        "Nope.": Reply.NO,
        "Nee, klopt niet.": Reply.NO,
        "Yes but it's Premium now.": Reply.NO,
        "I'd have to check.": Reply.NEITHER,
        "mhm": Reply.NEITHER,
    }

    got = await judge.answers([(question, reply) for reply in replies])

    assert dict(zip(replies, got, strict=True)) == replies


def test_heads_refuse_an_embedder_they_were_not_trained_over() -> None:
    heads = Heads.load(PACKAGED_HEADS, PACKAGED_HEADS_SHA256)

    with pytest.raises(EmbedderMismatchError, match="need the embedder"):
        LearnedJudge(HashingEmbedder(384), heads)


async def test_the_field_head_reads_a_kind_nobody_trained_it_on(judge: LearnedJudge) -> None:
    at = datetime(2026, 3, 2, 10, tzinfo=UTC)
    transcript = [
        Message(Role.AGENT, "Which membership are you on at the moment?", at),
        Message(
            Role.SUBJECT,
            "The gold membership, since last autumn. My knee still hurts from the marathon.",
            at,
        ),
        Message(Role.AGENT, "What would you like to achieve this year?", at),
        Message(Role.SUBJECT, "Mostly I want to lose about ten kilos.", at),
    ]
    fields = ["membership_tier", "fitness_goal", "favourite_class"]

    found = await judge.field_statements(transcript, fields)

    best = {
        f: max((s for s in found if s.field == f), key=lambda s: s.p, default=None) for f in fields
    }
    tier, goal = best["membership_tier"], best["fitness_goal"]
    assert tier is not None
    assert (tier.message_index, tier.clause) == (1, "The gold membership")
    assert goal is not None
    assert (goal.message_index, goal.clause) == (3, "Mostly I want to lose about ten kilos")
    assert best["favourite_class"] is None  # nobody said one
    assert await judge.field_statements(transcript, []) == []


async def test_a_request_to_forget_is_closest_to_the_words_it_asks_about(
    judge: LearnedJudge,
) -> None:
    asks = "Please remove my PayPal from your records, I closed that account."
    (judged,) = await judge.judge([asks])
    assert judged.forget_request
    said = [
        "I pay everything by PayPal if possible.",
        "My partner, Dev Kapoor, 07700 900312.",
        "We hope to move by end of August.",
    ]
    paypal, partner, move = await judge.similarities(asks, said)
    assert paypal > max(partner, move) + 0.1
    assert all(-1.0 <= s <= 1.0 for s in (paypal, partner, move))
    assert await judge.similarities(asks, []) == []
