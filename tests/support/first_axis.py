"""Vectors laid out by cosine: every query embeds as the first unit vector, and a fact stored
`at_cosine(c, axis)` has cosine `c` to it, whatever its text (keyword-bound tests)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import numpy as np

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.postgres_server import PostgresLocation
from factledger.testing.manual_clock import ManualClock
from factledger.testing.pgvector_support import pgvector_backend
from factledger.testing.scripted_extractor import ScriptedExtractor

DIMENSION = 256  # room for a distinct axis per fact in the largest layout


class QueryAlongTheFirstAxis:
    """Embeds every text as the first unit vector: facts get their cosines by construction."""

    dimension, model_id = DIMENSION, "first-axis"

    async def embed(self, texts: Sequence[str]) -> np.ndarray[Any, Any]:
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        vectors[:, 0] = 1.0
        return vectors


def at_cosine(cosine: float, axis: int) -> np.ndarray[Any, Any]:
    """A unit vector at `cosine` to the first axis, leaning on `axis` (1 to DIMENSION - 1)."""
    vector = np.zeros(DIMENSION, dtype=np.float32)
    vector[0], vector[axis] = cosine, np.sqrt(1.0 - cosine**2)
    return vector


@asynccontextmanager
async def first_axis_backend(
    postgres: PostgresLocation, start: datetime
) -> AsyncIterator[PgvectorMemoryBackend]:
    """A pgvector backend whose queries embed along the first axis, its clock at `start`."""
    async with pgvector_backend(
        postgres,
        embedder=QueryAlongTheFirstAxis(),
        extractor=ScriptedExtractor(),
        clock=ManualClock(start),
    ) as backend:
        yield backend
