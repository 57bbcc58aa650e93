"""`EmbeddingFieldReader`: the field heads over the embedder the backend already runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import structlog

from factledger.adapters.field_reader.head import NONE, FieldHeads, KindHead
from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.types import QueryVector

log = structlog.get_logger(__name__)


class EmbeddingFieldReader:
    """Implements `FieldReader`: a text states the field its kind's head gives at least the
    heads' `min_probability` (or the caller's, chosen from the heads' own out-of-fold
    figures for another precision), when that field holds one value."""

    def __init__(
        self, embedder: Embedder, heads: FieldHeads, *, min_probability: float | None = None
    ) -> None:
        self._embedder = embedder
        self._heads = heads
        self._min_probability = (
            heads.min_probability if min_probability is None else min_probability
        )
        # Heads fitted over another model's vectors would read noise: they are not used.
        self._usable = embedder.model_id == heads.model_id and embedder.dimension == heads.dimension
        if not self._usable:
            log.warning(
                "field_reader.embedder_mismatch",
                model_id=embedder.model_id,
                heads_model_id=heads.model_id,
            )

    def knows(self, kind: str) -> bool:
        return self._usable and kind in self._heads.kinds

    async def query_vector(self, text: str) -> QueryVector | None:
        """The text's vector by the embedder (None: the heads are not usable over it), tagged
        so the backend's search takes it as its own instead of embedding the text again."""
        if not self._usable:
            return None
        vectors = await self._embedder.embed([text])
        return QueryVector(text, self._embedder, np.asarray(vectors[0], dtype=np.float32))

    def field_of(self, kind: str, vector: QueryVector) -> str | None:
        """The field the text of `vector` speaks of, for `kind` (None: not sure, a list field
        for heads that hold those back, or a kind or vector the heads cannot read)."""
        head = self._heads.kinds.get(kind)
        if head is None or not self._usable or vector.embedder is not self._embedder:
            return None
        return self._fields(head, vector.values.reshape(1, -1))[0]

    def ranked_fields(self, kind: str, vector: QueryVector) -> tuple[str, ...]:
        """The kind's fields, the most probable for the text of `vector` first."""
        head = self._heads.kinds.get(kind)
        if head is None or not self._usable or vector.embedder is not self._embedder:
            return ()
        row = head.probabilities(vector.values.reshape(1, -1))[0]
        order = np.argsort(-row, kind="stable")
        return tuple(head.classes[int(i)] for i in order if head.classes[int(i)] != NONE)

    async def read(self, kind: str, texts: Sequence[str]) -> list[str | None]:
        head = self._heads.kinds.get(kind)
        if head is None or not self._usable or not texts:
            return [None] * len(texts)
        vectors = np.asarray(await self._embedder.embed(list(texts)), dtype=np.float32)
        return self._fields(head, vectors)

    def _fields(self, head: KindHead, vectors: Vectors) -> list[str | None]:
        probabilities = head.probabilities(vectors)
        best = probabilities.argmax(axis=1)
        out: list[str | None] = []
        for row, column in zip(probabilities, best, strict=True):
            field = head.classes[int(column)]
            sure = float(row[column]) >= self._min_probability
            out.append(field if sure and field != NONE and field not in head.many else None)
        return out
