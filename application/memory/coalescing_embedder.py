"""`CoalescingEmbedder`: callers that ask while an embedder call is running are served
together by the next call. A model embeds a batch of texts in
far less time than the same texts one call each; the sync worker applies items of several
subjects side by side, so their records' and facts' texts meet here.

No caller waits for company: a call with nothing in flight starts at once. Whatever arrives
during it is embedded in one call as soon as it returns (at most `max_texts` texts a call;
more wait for the next). An error fails only the callers of that call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from factledger.application.memory.ports import Embedder, Vectors


class CoalescingEmbedder:
    """An `Embedder` that batches concurrent callers' texts into one call of `inner`."""

    def __init__(self, inner: Embedder, *, max_texts: int = 256) -> None:
        self.inner = inner
        self.dimension = inner.dimension
        self.model_id = inner.model_id
        self._max_texts = max_texts
        self._queue: list[tuple[Sequence[str], asyncio.Future[Vectors]]] = []
        self._running: asyncio.Task[None] | None = None
        self.calls = 0  # calls of `inner`, for tests and figures

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return await self.inner.embed(texts)
        future: asyncio.Future[Vectors] = asyncio.get_running_loop().create_future()
        self._queue.append((texts, future))
        if self._running is None or self._running.done():
            self._running = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._queue:
            batch: list[tuple[Sequence[str], asyncio.Future[Vectors]]] = []
            size = 0
            while self._queue and (not batch or size + len(self._queue[0][0]) <= self._max_texts):
                texts, future = self._queue.pop(0)
                if future.cancelled():
                    continue
                batch.append((texts, future))
                size += len(texts)
            if not batch:
                continue
            joined = [text for texts, _ in batch for text in texts]
            self.calls += 1
            try:
                vectors = await self.inner.embed(joined)
            except Exception as exc:  # each caller of this call gets the error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            start = 0
            for texts, future in batch:
                part = np.asarray(vectors[start : start + len(texts)])
                start += len(texts)
                if not future.done():
                    future.set_result(part)
