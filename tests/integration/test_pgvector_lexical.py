"""pgvector hybrid search: the lexical half matches any word of the query, as BM25 does."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import numpy as np
import pytest

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.memory.ports import Vectors
from factledger.application.memory.types import Namespace, SearchMode, SearchQuery
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

pytestmark = pytest.mark.integration
NS = Namespace("tenant-1:lexical")
DISTRACTORS = [f"Talked about the weather and holiday plan number {n}" for n in range(12)]
TARGET = "Went to the support group meeting in the library yesterday"
QUESTION = "When did Caroline go to the support group, and what did she think of it?"


class SameVectorEmbedder:
    """Every text gets the same vector, so only the lexical half can rank."""

    dimension = 8
    model_id = "same-vector"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        vectors[:, 0] = 1.0
        return vectors


@pytest.fixture
async def backend(postgres: PostgresLocation) -> AsyncIterator[PgvectorMemoryBackend]:
    async with pgvector_backend(
        postgres, embedder=SameVectorEmbedder(), extractor=ScriptedExtractor(), clock=ManualClock()
    ) as backend:
        for n, text in enumerate(DISTRACTORS):
            await backend.put_record(NS, f"a-{n:02d}", "turn", f'{{"text": "{text}"}}')
        # The id sorts last, so ties on the (uninformative) vectors never favour it.
        await backend.put_record(NS, "z-target", "turn", f'{{"text": "{TARGET}"}}')
        yield backend


async def test_a_question_sharing_only_some_words_finds_its_record(
    backend: PgvectorMemoryBackend,
) -> None:
    hits = await backend.search(
        NS, SearchQuery(QUESTION, mode=SearchMode.HYBRID, threshold=0.0, limit=3)
    )

    assert hits[0].document_id == "z-target" or TARGET in hits[0].text


async def test_a_question_of_stop_words_only_still_answers(
    backend: PgvectorMemoryBackend,
) -> None:
    hits = await backend.search(
        NS, SearchQuery("what was it?", mode=SearchMode.HYBRID, threshold=0.0, limit=3)
    )

    assert len(hits) == 3
