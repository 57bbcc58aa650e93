"""What a query asks about and what an unslotted memory speaks of join the keywords
(ADR 0098): the decorators with a fixed reader, and what the topic's keyword does to
memories-mode's lift."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from factledger.application.memory.calibration import Calibration
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.lexical import (
    coverage,
    document_frequency,
    fused_score,
    idf_weights,
    lexical_terms,
    query_terms,
)
from factledger.application.memory.topics import (
    AskedQuery,
    AskedTopicMemoryBackend,
    TopicTaggingExtractor,
)
from factledger.application.memory.types import (
    Capability,
    Namespace,
    QueryVector,
    SearchHit,
    SearchMode,
    SearchQuery,
)
from factledger.domain.transcript import Message, Role

NS = Namespace("topics")


class FixedReader:
    """Reads the topic a table gives each text; None for any other text."""

    def __init__(self, topics: dict[str, str], words: dict[str, str] | None = None) -> None:
        self.topics = topics
        self.words = words or {}
        self.read: list[str] = []

    def asked_with(self, topic: str) -> str | None:
        return self.words.get(topic)

    async def read_topics(self, texts: Sequence[str]) -> list[str | None]:
        self.read.extend(texts)
        return [self.topics.get(t) for t in texts]

    async def read_query(self, text: str, given: QueryVector | None = None) -> AskedQuery:
        (topic,) = await self.read_topics([text])
        return AskedQuery(topic, QueryVector(text, self, np.ones(2, dtype=np.float32)))


class FixedExtractor:
    def __init__(self, facts: list[ExtractedFact]) -> None:
        self.facts = facts

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return self.facts


class RecordingBackend:
    """Only `search` is called by these tests; the forwarding base delegates the rest."""

    name = "recording"
    capabilities: frozenset[Capability] = frozenset()

    def __init__(self) -> None:
        self.queries: list[SearchQuery] = []

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        self.queries.append(query)
        return []


async def test_unslotted_memories_take_their_topic_and_all_their_kinds_asked_words() -> None:
    facts = [
        ExtractedFact("f0", "has a dog called Biscuit", None, (0,)),
        ExtractedFact("f1", "moved to Lucca", "location", (0,)),
        ExtractedFact("f2", "allergic to nuts", "allergy:nuts", (0,)),
        ExtractedFact("f3", "said hello", None, (0,)),
    ]
    reader = FixedReader(
        {"has a dog called Biscuit": "pet", "moved to Lucca": "hobby"},
        {"pet": "animal", "location": "base live", "allergy": "allergic"},
    )
    request = ExtractionRequest([Message(Role.SUBJECT, "x")], datetime(2026, 1, 1, tzinfo=UTC))

    tagged = await TopicTaggingExtractor(FixedExtractor(facts), reader).extract(request)

    assert [f.topic for f in tagged] == ["pet", None, None, None]
    assert [f.asked_with for f in tagged] == ["animal", "base live", "allergic", None]
    assert reader.read == ["has a dog called Biscuit", "said hello"]  # a slot is never re-read


@pytest.mark.parametrize(
    ("query", "asked"),
    [
        (SearchQuery("Who supplies their cartons?"), "supplier"),
        (SearchQuery("Who supplies their cartons?", mode=SearchMode.HYBRID), None),
        (SearchQuery("Who supplies their cartons?", asked_about="budget"), "budget"),
        (SearchQuery("How was the weekend?"), None),
    ],
)
async def test_a_memories_search_carries_what_its_text_asks_about(
    query: SearchQuery, asked: str | None
) -> None:
    inner = RecordingBackend()
    backend = AskedTopicMemoryBackend(
        inner,  # type: ignore[arg-type]
        FixedReader({"Who supplies their cartons?": "supplier"}),
    )

    await backend.search(NS, query)

    assert inner.queries[0].asked_about == asked


async def test_a_memories_search_carries_the_vector_its_topic_was_read_from() -> None:
    inner = RecordingBackend()
    reader = FixedReader({"Who supplies their cartons?": "supplier"})
    backend = AskedTopicMemoryBackend(inner, reader)  # type: ignore[arg-type]

    await backend.search(NS, SearchQuery("Who supplies their cartons?"))
    await backend.search(NS, SearchQuery("Who supplies it?", mode=SearchMode.HYBRID))

    given = inner.queries[0].vector
    assert given is not None
    assert given.text == "Who supplies their cartons?"
    assert given.embedder is reader
    assert inner.queries[1].vector is None  # not read, so nothing embedded to pass on


def test_the_topic_joins_an_unslotted_facts_keywords_and_a_slot_wins_over_it() -> None:
    assert "pet" in lexical_terms("has a dog called Biscuit", "", None, topic="pet")
    slotted = lexical_terms("moved to Lucca", "", None, "location", topic="pet")
    assert "location" in slotted
    assert "pet" not in slotted


def test_the_words_a_kind_is_asked_with_join_the_facts_keywords() -> None:
    terms = lexical_terms("moved to Lucca", "", None, "location", asked_with="based live")

    assert {"base", "live", "location", "lucca"} <= set(terms)


def test_the_asked_topic_joins_the_query_after_its_own_words_once() -> None:
    assert query_terms("Which town are they in?", "location")[-1] == "location"
    assert query_terms("Which job title?", "job_title").count("job") == 1
    assert query_terms("Which town?", "intent:shop") == query_terms("Which town?")


def _lift(query: str, asked: str | None, facts: dict[str, set[str]]) -> dict[str, float]:
    terms = query_terms(query, asked)
    weights = idf_weights(terms, document_frequency(terms, list(facts.values())), len(facts))
    return {name: coverage(terms, weights, held) for name, held in facts.items()}


def test_a_question_read_as_a_slot_lifts_that_slots_fact_and_no_other() -> None:
    facts = {
        "city": set(lexical_terms("moved to Lucca", "", None, "location")),
        "employer": set(lexical_terms("works at Globex", "", None, "employer")),
        "pet": set(lexical_terms("their cat is called Pixel", "", None, topic="pet")),
    }

    lift = _lift("Which town are they in these days?", "location", facts)

    assert lift["city"] > 0.0
    assert lift["employer"] == lift["pet"] == 0.0


def test_a_topic_no_fact_holds_dampens_a_chance_word_of_another_topic() -> None:
    facts = {
        "violin": set(lexical_terms("their daughter plays the violin", "", None, topic="family")),
        "city": set(lexical_terms("moved to Lucca", "", None, "location")),
    }

    unread = _lift("How much have they got to play with?", None, facts)["violin"]
    read = _lift("How much have they got to play with?", "budget", facts)["violin"]

    assert 0.0 < read < unread


@given(
    cosine=st.floats(-1.0, 1.0),
    held=st.floats(0.0, 1.0),
    more=st.floats(0.0, 1.0),
    slope=st.floats(0.5, 20.0),
    intercept=st.floats(-10.0, 10.0),
)
def test_served_relevance_never_falls_as_a_fact_holds_more_of_the_query(
    cosine: float, held: float, more: float, slope: float, intercept: float
) -> None:
    calibration = Calibration(slope=slope, intercept=intercept)
    less_held, more_held = sorted((held, more))

    assert calibration.relevance(fused_score(cosine, more_held)) >= calibration.relevance(
        fused_score(cosine, less_held)
    )
