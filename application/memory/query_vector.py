"""The vector a backend searches with: the one that came with the query when a layer above
embedded its text with the backend's own embedder (the asked-topic reader, ADR 0102), or a
fresh embedding. One embedding of a query then serves both, whatever the embedder caches."""

from __future__ import annotations

from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.types import SearchQuery


def given_vector(query: SearchQuery, embedder: Embedder) -> Vectors | None:
    """The query's own vector if it is its text's by `embedder`; None otherwise."""
    given = query.vector
    if given is None or given.embedder is not embedder or given.text != query.text:
        return None
    return given.values


async def query_vector(query: SearchQuery, embedder: Embedder) -> Vectors:
    """The vector of the query's text by `embedder`: the one it came with, or embedded now."""
    given = given_vector(query, embedder)
    return given if given is not None else (await embedder.embed([query.text]))[0]
