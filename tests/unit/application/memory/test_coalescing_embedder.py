"""`CoalescingEmbedder`: callers that arrive while a call runs share the next one."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.application.memory.coalescing_embedder import CoalescingEmbedder
from factledger.application.memory.ports import Vectors


class GatedEmbedder:
    """A hashing embedder whose calls wait for `gate`, recording each call's texts."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder()
        self.dimension, self.model_id = self._inner.dimension, self._inner.model_id
        self.gate = asyncio.Event()
        self.calls: list[list[str]] = []
        self.fail = False

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        await self.gate.wait()
        if self.fail:
            raise RuntimeError("model away")
        return await self._inner.embed(texts)


async def test_callers_waiting_on_a_call_share_the_next_and_get_their_own_vectors() -> None:
    inner = GatedEmbedder()
    embedder = CoalescingEmbedder(inner)
    first = asyncio.create_task(embedder.embed(["a"]))
    await asyncio.sleep(0)
    second = asyncio.create_task(embedder.embed(["b", "c"]))
    third = asyncio.create_task(embedder.embed(["d"]))
    await asyncio.sleep(0)
    inner.gate.set()
    results = await asyncio.gather(first, second, third)
    assert inner.calls == [["a"], ["b", "c", "d"]]
    expected = HashingEmbedder()
    for texts, got in zip([["a"], ["b", "c"], ["d"]], results, strict=True):
        assert np.array_equal(got, await expected.embed(texts))


async def test_an_error_fails_the_callers_of_that_call_only() -> None:
    inner = GatedEmbedder()
    embedder = CoalescingEmbedder(inner)
    inner.fail = True
    failing = asyncio.create_task(embedder.embed(["a"]))
    await asyncio.sleep(0)
    inner.gate.set()
    with pytest.raises(RuntimeError):
        await failing
    inner.fail = False
    assert (await embedder.embed(["b"])).shape == (1, inner.dimension)


async def test_a_batch_holds_at_most_max_texts() -> None:
    inner = GatedEmbedder()
    embedder = CoalescingEmbedder(inner, max_texts=2)
    tasks = [asyncio.create_task(embedder.embed([t])) for t in "abcde"]
    await asyncio.sleep(0)
    inner.gate.set()
    await asyncio.gather(*tasks)
    assert [len(c) for c in inner.calls] == [2, 2, 1]
