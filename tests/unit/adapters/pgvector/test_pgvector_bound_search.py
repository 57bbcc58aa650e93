"""The arguments of `bound_search`: the vector as `$1`, every other value typed from `$2`."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from psycopg import sql

from factledger.adapters.pgvector.bound_search import function_arguments


def test_values_become_typed_elements_of_one_text_array_in_order() -> None:
    vector = np.ones(4, dtype=np.float32)
    when = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
    statement = sql.SQL("SELECT %s, %s, %s, %s, %s, %s, %s, %b, embedding <=> %b, 'x%%'")
    args = ["ns-1", 3, 2**70, 0.25, True, when, None, vector, vector]

    text, sent_vector, texts = function_arguments(None, statement, args)

    assert text == (
        "SELECT ($2[1]), ($2[2])::bigint, ($2[3])::numeric, ($2[4])::double precision, "
        "($2[5])::boolean, ($2[6])::timestamptz, ($2[7]), $1, embedding <=> $1, 'x%'"
    )
    assert sent_vector is vector
    assert texts == ["ns-1", "3", str(2**70), "0.25", "True", when.isoformat(), None]


def test_a_value_never_enters_the_statement_text() -> None:
    hostile = "'); DROP TABLE memories; --"

    text, _, texts = function_arguments(None, sql.SQL("SELECT %s"), [hostile])

    assert hostile not in text
    assert texts == [hostile]


def test_two_different_vectors_or_a_count_mismatch_are_refused() -> None:
    one, two = np.ones(4, dtype=np.float32), np.zeros(4, dtype=np.float32)

    with pytest.raises(ValueError, match="one query vector"):
        function_arguments(None, sql.SQL("SELECT %b, %b"), [one, two])
    with pytest.raises(ValueError, match="more arguments"):
        function_arguments(None, sql.SQL("SELECT %s"), ["a", "b"])
    with pytest.raises(ValueError, match="fewer arguments"):
        function_arguments(None, sql.SQL("SELECT %s, %s"), ["a"])
