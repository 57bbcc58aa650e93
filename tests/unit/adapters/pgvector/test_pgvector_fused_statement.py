"""The one-statement search's text (ADR 0050): composed once per shape, short enough for
psycopg to cache its parsing, the namespace a literal only for an ANN index."""

from __future__ import annotations

from psycopg import _queries

from factledger.adapters.pgvector.fused_search import FusedShape, fused_shape, fused_statement
from factledger.application.memory.types import MAX_LIMIT, Namespace, SearchQuery


def test_the_longest_statement_stays_under_psycopgs_cached_length() -> None:
    # Given: the longest namespace, limit and depth, and every visibility clause
    shape = FusedShape(Namespace("n" * 100), False, False, False, MAX_LIMIT, 400)

    # When
    text = fused_statement(shape)

    # Then
    assert len(text) <= _queries.MAX_CACHED_STATEMENT_LENGTH


def test_the_text_is_composed_once_per_shape() -> None:
    query = SearchQuery("team office", threshold=0.0)

    first = fused_statement(fused_shape(Namespace("a:b"), query, ann=True, depth=100))
    again = fused_statement(fused_shape(Namespace("a:b"), query, ann=True, depth=100))

    assert first is again


def test_only_an_indexed_namespace_is_written_as_a_literal() -> None:
    query = SearchQuery("team office", threshold=0.0)

    indexed = fused_statement(fused_shape(Namespace("a:b"), query, ann=True, depth=100))
    exact = fused_statement(fused_shape(Namespace("a:b"), query, ann=False, depth=20))

    assert b"namespace='a:b'" in indexed
    assert b"'a:b'" not in exact
    assert exact == fused_statement(fused_shape(Namespace("c:d"), query, ann=False, depth=20))
