"""`RecentVectors`: texts embedded lately are not encoded again, rows come back in the
caller's order, the oldest are let go past the bound, and a failing encoder's error reaches
the caller with nothing remembered."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.recent_vectors import RecentVectors
from factledger.application.errors import ModelUnavailableError
from factledger.application.memory.ports import Vectors


class Counting:
    """A hashing embedder that records each call's texts; `failing` raises instead."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(16)
        self.dimension, self.model_id = self.inner.dimension, "counting"
        self.calls: list[list[str]] = []
        self.failing = False

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self.failing:
            raise ModelUnavailableError("multilingual_encoder")
        self.calls.append(list(texts))
        return await self.inner.embed(texts)


async def test_texts_embedded_lately_are_not_encoded_again() -> None:
    inner = Counting()
    recent = RecentVectors(inner)

    first = await recent.embed(["We moved.", "Call me at five."])
    again = await recent.embed(
        ["Call me at five.", "New words here.", "We moved.", "New words here."]
    )

    assert inner.calls == [["We moved.", "Call me at five."], ["New words here."]]
    expected = await HashingEmbedder(16).embed(
        ["Call me at five.", "New words here.", "We moved.", "New words here."]
    )
    np.testing.assert_array_equal(again, expected)
    np.testing.assert_array_equal(first[1], again[0])
    assert (recent.model_id, recent.dimension) == ("counting", 16)


async def test_past_the_bound_the_oldest_are_encoded_again() -> None:
    inner = Counting()
    recent = RecentVectors(inner, kept=2)
    for text in ("one", "two", "three"):
        await recent.embed([text])
    await recent.embed(["three", "one"])
    assert inner.calls[-1] == ["one"]


async def test_nothing_in_nothing_out_and_a_failure_is_the_callers() -> None:
    inner = Counting()
    recent = RecentVectors(inner)
    assert (await recent.embed([])).shape == (0, 16)
    inner.failing = True
    with pytest.raises(ModelUnavailableError):
        await recent.embed(["We moved."])
    inner.failing = False
    await recent.embed(["We moved."])
    assert inner.calls == [["We moved."]]
