"""The ONNX embedder's vector cache: a text met again gets the very vector a run would give."""

from __future__ import annotations

import numpy as np
import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.vector_cache import VectorCache, text_key

TEXTS = [
    "preference: prefers to be called in the morning",
    "supplier: works with a flour mill near the harbour",
    '{"field":"supplier","operation":"set","value":"a flour mill near the harbour"}',
    "preference: prefers to be called in the morning",  # the first text again
]


@pytest.fixture(scope="module")
def uncached() -> OnnxEmbedder:
    return OnnxEmbedder(cached_vectors=0)


async def test_cached_and_repeated_texts_get_bit_identical_vectors(
    uncached: OnnxEmbedder,
) -> None:
    # Given each text embedded alone by an embedder that keeps nothing
    alone = np.vstack([await uncached.embed([text]) for text in TEXTS])
    cached = OnnxEmbedder()

    # When one call holds a repeat, and a second call meets every text again
    first = await cached.embed(TEXTS)
    second = await cached.embed(list(reversed(TEXTS)))

    # Then every vector is the one a run of that text alone gives, bit for bit
    assert first.dtype == np.float32
    assert first.shape == (4, uncached.dimension)
    assert np.array_equal(first, alone)
    assert np.array_equal(second, alone[::-1])
    assert cached.vectors.hits == 3  # the second call found its three distinct texts


async def test_an_embedder_without_a_cache_runs_every_call(uncached: OnnxEmbedder) -> None:
    before = uncached.vectors.hits

    await uncached.embed(TEXTS[:2])
    await uncached.embed(TEXTS[:2])

    assert len(uncached.vectors) == 0
    assert uncached.vectors.hits == before


def test_the_cache_forgets_the_least_recently_used_past_its_capacity() -> None:
    cache = VectorCache(capacity=2)
    a, b, c = (text_key(t) for t in ("a", "b", "c"))
    cache.put_many({a: np.ones(3), b: np.zeros(3)})
    cache.get_many([a])  # a is now the most recently used

    cache.put_many({c: np.full(3, 2.0)})

    assert set(cache.get_many([a, b, c])) == {a, c}


def test_the_cache_keeps_digests_not_texts() -> None:
    secret = "my sister's diagnosis"
    cache = VectorCache()

    cache.put_many({text_key(secret): np.ones(3)})

    assert len(text_key(secret)) == 16
    assert secret.encode() not in b"".join(cache.get_many([text_key(secret)]))
    assert all(isinstance(key, bytes) and len(key) == 16 for key in cache._vectors)


def test_a_kept_vector_is_a_copy_of_the_callers_row() -> None:
    cache = VectorCache()
    rows = np.ones((2, 3), dtype=np.float32)
    key = text_key("a")

    cache.put_many({key: rows[0]})
    rows[0] = 5.0

    assert np.array_equal(cache.get_many([key])[key], np.ones(3, dtype=np.float32))
