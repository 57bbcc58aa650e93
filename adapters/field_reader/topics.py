"""`EmbeddingTopicReader`: the asked-topic head over the embedder the backend already runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import structlog

from factledger.adapters.field_reader.head import ALL_KINDS, NONE, FieldHeads
from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.topics import AskedQuery
from factledger.application.memory.types import QueryVector

log = structlog.get_logger(__name__)


class EmbeddingTopicReader:
    """Implements `TopicReader`: a text speaks of the topic the head gives at least its
    `min_probability`. Over another embedder than the head's, it reads nothing (and embeds
    nothing)."""

    def __init__(self, embedder: Embedder, heads: FieldHeads) -> None:
        self._embedder = embedder
        self._head = heads.kinds.get(ALL_KINDS)
        self._min_probability = heads.min_probability
        self._words = heads.words
        usable = embedder.model_id == heads.model_id and embedder.dimension == heads.dimension
        if not usable:
            log.warning(
                "topic_reader.embedder_mismatch",
                model_id=embedder.model_id,
                heads_model_id=heads.model_id,
            )
            self._head = None

    def asked_with(self, topic: str) -> str | None:
        if self._head is None:
            return None
        return self._words.get(topic) or None

    async def read_topics(self, texts: Sequence[str]) -> list[str | None]:
        if self._head is None or not texts:
            return [None] * len(texts)
        return self._topics(await self._vectors(texts))

    async def read_query(self, text: str, given: QueryVector | None = None) -> AskedQuery:
        if self._head is None:
            return AskedQuery(topic=None, vector=None)
        if given is not None and given.embedder is self._embedder and given.text == text:
            (topic,) = self._topics(given.values.reshape(1, -1))
            return AskedQuery(topic, given)
        vectors = await self._vectors([text])
        (topic,) = self._topics(vectors)
        return AskedQuery(topic, QueryVector(text, self._embedder, vectors[0]))

    async def _vectors(self, texts: Sequence[str]) -> Vectors:
        return np.asarray(await self._embedder.embed(list(texts)), dtype=np.float32)

    def _topics(self, vectors: Vectors) -> list[str | None]:
        head = self._head
        assert head is not None  # noqa: S101 - callers embed only when there is a head
        out: list[str | None] = []
        for row in head.probabilities(vectors):
            best = int(row.argmax())
            topic = head.classes[best]
            sure = float(row[best]) >= self._min_probability
            out.append(topic if sure and topic != NONE else None)
        return out
