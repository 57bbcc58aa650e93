"""A query's vector embedded once (ADR 0102): a backend searches with the vector that came
with the query only when it is that text's by the backend's own embedder, and otherwise
embeds the text itself; the in-memory backend then answers as if it had embedded it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.ports import Vectors
from factledger.application.memory.query_vector import given_vector, query_vector
from factledger.application.memory.types import Namespace, QueryVector, SearchQuery
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor, stated

NS = Namespace("query-vector")
TEXT = "Where do they live now?"


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return await super().embed(texts)


def tagged(embedder: object, text: str = TEXT) -> SearchQuery:
    return SearchQuery(TEXT, vector=QueryVector(text, embedder, np.ones(64, dtype=np.float32)))


def test_a_vector_is_used_only_for_its_own_text_by_the_same_embedder() -> None:
    embedder = CountingEmbedder()

    assert given_vector(tagged(embedder), embedder) is not None
    assert given_vector(tagged(HashingEmbedder(64)), embedder) is None  # same model, not it
    assert given_vector(tagged(embedder, "another text"), embedder) is None
    assert given_vector(SearchQuery(TEXT), embedder) is None


async def test_without_a_usable_vector_the_text_is_embedded() -> None:
    embedder = CountingEmbedder()

    vector = await query_vector(tagged(embedder, "another text"), embedder)

    assert embedder.texts == [TEXT]
    np.testing.assert_array_equal(vector, (await HashingEmbedder(64).embed([TEXT]))[0])


def test_the_vector_is_no_part_of_what_the_query_asks() -> None:
    assert tagged(CountingEmbedder()) == SearchQuery(TEXT)
    assert "vector" not in repr(tagged(CountingEmbedder()))


@pytest.mark.parametrize("given", [True, False])
async def test_the_in_memory_backend_searches_with_the_given_vector_as_with_its_own(
    given: bool,
) -> None:
    embedder, extractor = CountingEmbedder(), ScriptedExtractor()
    backend = InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=ManualClock())
    transcript = extractor.script("call", stated("f0", "moved to Lucca"), stated("f1", "has a dog"))
    await backend.ingest_transcript(NS, "call", transcript, occurred_at=ManualClock().now())
    query = SearchQuery(TEXT, threshold=0.0, limit=5)
    if given:
        own = (await HashingEmbedder(64).embed([TEXT]))[0]
        query = replace(query, vector=QueryVector(TEXT, embedder, own))
    embedder.texts.clear()

    hits = await backend.search(NS, query)

    assert embedder.texts == ([] if given else [TEXT])
    assert [h.id for h in hits] == [
        h.id for h in await backend.search(NS, SearchQuery(TEXT, threshold=0.0, limit=5))
    ]
