"""The BM25 reference, the PrefEval protocol and the caching embedder."""

from __future__ import annotations

import json

import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.application.errors import MemoryConflictError
from factledger.application.memory.types import SearchMode, SearchQuery, namespace
from factledger.bench.bm25_reference import Bm25ReferenceBackend, tokens
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.bench.prefeval import PrefEntry, run_prefeval

NS = namespace("bench-test")


def test_tokens_are_lower_cased_words_without_stop_words() -> None:
    assert tokens("I'd LOVE the Pottery class!") == ["d", "love", "pottery", "class"]


async def test_bm25_ranks_the_rarer_matching_term_first() -> None:
    backend = Bm25ReferenceBackend()
    await backend.put_record(NS, "a", "k", json.dumps("pottery class on tuesday"))
    await backend.put_record(NS, "b", "k", json.dumps("class schedule and class notes"))
    await backend.put_record(NS, "c", "k", json.dumps("nothing relevant here"))
    hits = await backend.search(NS, SearchQuery("pottery class", SearchMode.CHUNKS, 0.0, 10))
    assert [hit.id for hit in hits] == ["a", "b"]
    assert hits[0].score >= hits[1].score
    assert await backend.search(namespace("other"), SearchQuery("pottery")) == []


async def test_bm25_records_are_immutable() -> None:
    backend = Bm25ReferenceBackend()
    await backend.put_record(NS, "a", "k", json.dumps("one"))
    await backend.put_record(NS, "a", "k", json.dumps("one"))
    with pytest.raises(MemoryConflictError):
        await backend.put_record(NS, "a", "k", json.dumps("two"))


def entry(topic: str, index: int, subject: str) -> PrefEntry:
    return PrefEntry(
        topic,
        index,
        f"I never book a {subject} without checking the reviews {index}.",
        f"Which {subject} should I book this weekend?",
        (
            f"Any {subject} ideas?",
            f"1. A cheap {subject}. 2. A reviewed {subject}.",
            f"The reviewed {subject} it is.",
            "Noted.",
        ),
    )


async def test_the_prefeval_protocol_scores_each_entry_against_the_other_topic() -> None:
    topics = {
        "travel_restaurant": [entry("travel_restaurant", i, "restaurant") for i in range(3)],
        "entertain_shows": [entry("entertain_shows", i, "concert") for i in range(2)],
    }
    backend = Bm25ReferenceBackend()
    scores = await run_prefeval(backend, "t", topics, mode=SearchMode.CHUNKS)
    said = scores.said.as_dict()
    assert said["overall"]["n"] == 5
    # Only x shares the question's topic word with anything in its namespace.
    assert said["overall"]["hit@1"] == 1.0
    assert scores.lenient.as_dict()["overall"]["hit@1"] == 1.0
    assert scores.strict.as_dict()["overall"]["hit@10"] == 1.0
    assert backend._indexes == {}  # every namespace was dropped


async def test_the_cache_returns_the_inner_vectors_and_can_be_bypassed() -> None:
    inner = HashingEmbedder(64)
    cache = CachingEmbedder(inner)
    texts = ["alpha beta", "gamma", "alpha beta"]
    np.testing.assert_allclose(await cache.embed(texts), await inner.embed(texts))
    assert len(cache._vectors) == 2
    cache.enabled = False
    await cache.embed(["delta"])
    assert "delta" not in cache._vectors
    assert (await cache.embed([])).shape == (0, 64)
