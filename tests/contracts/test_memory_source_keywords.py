"""Contract of the self-hosted backends: a fact is also found by the words of its source.

An extracted fact paraphrases what the subject said; the subject's own words are indexed
beside it (`application.memory.lexical`). The Supermemory adapter is exempt: the hosted
engine ranks with its own signals, which we neither see nor set.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from factledger.application.memory.lexical import LEXICAL_WEIGHT, SUBJECT_LABEL_KEY
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, ProcessingStatus, SearchQuery
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor, stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-source-words")
SOURCE = "Every month we order our cartons from Fernhill, they are reliable."


@pytest.fixture
def backend(self_hosted_backend: MemoryBackend) -> MemoryBackend:
    """The self-hosted backends only: this contract is theirs."""
    return self_hosted_backend


async def test_a_fact_is_found_by_a_keyword_only_its_source_sentence_holds(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", SOURCE, stated("f0", "Buys packaging from Fernhill"))
    await ingest(NS, "call-2", "The weather was lovely.", stated("f0", "Enjoyed the weather"))

    hits = await backend.search(NS, SearchQuery("cartons", threshold=LEXICAL_WEIGHT / 2))

    assert [h.text for h in hits] == ["Buys packaging from Fernhill"]


async def test_the_source_words_lift_a_fact_above_one_without_them(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", SOURCE, stated("f0", "Buys packaging from Fernhill"))
    await ingest(NS, "call-2", "Packaging talk.", stated("f0", "Buys packaging from Oakridge"))

    hits = await backend.search(NS, SearchQuery("packaging cartons", threshold=0.0, limit=2))

    assert hits[0].text == "Buys packaging from Fernhill"
    assert hits[0].score > hits[1].score


async def test_a_keyword_never_pushes_a_score_past_one_or_makes_it_rise_down_the_list(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", SOURCE, stated("f0", "Every month we order our cartons"))
    await ingest(NS, "call-2", "Packaging talk.", stated("f0", "Buys packaging from Oakridge"))

    hits = await backend.search(NS, SearchQuery(SOURCE, threshold=0.0, limit=5))

    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)


async def test_the_subject_label_finds_the_subjects_facts_and_is_not_in_their_text(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(
        NS,
        "call-1",
        "I collect stamps.",
        stated("f0", "Collects stamps"),
        metadata={SUBJECT_LABEL_KEY: "Ingrid"},
    )
    await ingest(NS, "call-2", "I collect coins.", stated("f0", "Collects coins"))

    hits = await backend.search(NS, SearchQuery("what does Ingrid collect", threshold=0.0))

    assert hits[0].text == "Collects stamps"


async def test_a_slot_name_finds_its_fact_and_is_not_in_its_text(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", "We are in Lucca.", stated("f0", "Based in Lucca", slot="location"))
    await ingest(NS, "call-2", "We love Lucca.", stated("f0", "Likes Lucca"))

    hits = await backend.search(NS, SearchQuery("location", threshold=LEXICAL_WEIGHT / 2))

    assert [h.text for h in hits] == ["Based in Lucca"]


async def test_a_fact_is_found_by_the_words_of_the_question_its_sentence_answers(
    backend: MemoryBackend, extractor: ScriptedExtractor, clock: ManualClock
) -> None:
    asked = [
        Message(Role.AGENT, "Which courier takes your parcels?"),
        Message(Role.SUBJECT, "Mostly Hermes."),
    ]
    told = [Message(Role.AGENT, "Parcels are heavy."), Message(Role.SUBJECT, "Mostly DHL.")]
    extractor.script_transcript(asked, stated("f0", "Uses Hermes", source_indexes=(1,)))
    extractor.script_transcript(told, stated("f0", "Uses DHL", source_indexes=(1,)))
    for document_id, transcript in (("call-1", asked), ("call-2", told)):
        await backend.ingest_transcript(NS, document_id, transcript, occurred_at=clock.now())

    hits = await backend.search(NS, SearchQuery("parcels", threshold=LEXICAL_WEIGHT / 2))

    assert [h.text for h in hits] == ["Uses Hermes"]


async def test_an_inflected_query_word_finds_the_fact_said_in_another_form(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(NS, "call-1", "I am researching adoption agencies.", stated("f0", "Adoption"))
    await ingest(NS, "call-2", "The weather was lovely.", stated("f0", "Enjoyed the weather"))

    hits = await backend.search(NS, SearchQuery("research", threshold=LEXICAL_WEIGHT / 2))

    assert [h.text for h in hits] == ["Adoption"]
