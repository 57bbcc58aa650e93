"""The visibility arrays of a namespace (`visibility.VisibilityColumns`) say, for every query's
flags and every moment, what testing each fact in Python says (`keywords.visible_fact`), also
after the facts' flags change once they are stored: superseded, forgotten, given an expiry
(one equal to the moment searched included), or an inference."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factledger.adapters.in_memory.keywords import visible_fact
from factledger.adapters.in_memory.store import NamespaceState, StoredFact
from factledger.application.memory.types import SearchQuery

NOW = datetime(2026, 1, 1, tzinfo=UTC)
MOMENTS = [NOW + timedelta(microseconds=m) for m in (-1, 0, 1, 10**6)]


def _fact(n: int, **flags: object) -> StoredFact:
    return StoredFact(f"m{n:03d}", f"fact {n}", None, "d", NOW, n, Counter(), {}, **flags)  # type: ignore[arg-type]


changes = st.lists(
    st.tuples(
        st.integers(0, 39),
        st.sampled_from(["is_latest", "is_inference", "forgotten", "expires_at"]),
        st.one_of(st.booleans(), st.sampled_from([None, *MOMENTS])),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(0, 40),
    changes=changes,
    superseded=st.booleans(),
    inferred=st.booleans(),
    forgotten=st.booleans(),
)
def test_the_arrays_say_what_each_fact_says(
    count: int,
    changes: list[tuple[int, str, object]],
    superseded: bool,
    inferred: bool,
    forgotten: bool,
) -> None:
    state = NamespaceState(4)
    for n in range(count):
        state.add_fact(_fact(n, is_latest=n % 3 != 0, expires_at=MOMENTS[n % 4] if n % 5 else None))
    for n, name, value in changes:
        if n >= count:
            continue
        if name == "expires_at":
            value = value if value is None or isinstance(value, datetime) else None
        else:
            value = bool(value)
        setattr(state.fact_rows[n], name, value)
    query = SearchQuery(
        "q",
        include_superseded=superseded,
        include_inferred=inferred,
        include_forgotten=forgotten,
    )

    for now in MOMENTS:
        expected = [visible_fact(f, query, now) for f in state.fact_rows]
        assert state.fact_visibility.mask(query, now).tolist() == expected


def test_an_expiry_equal_to_the_moment_hides_the_fact_as_the_fact_says() -> None:
    state = NamespaceState(4)
    state.add_fact(_fact(0))
    state.fact_rows[0].expires_at = NOW

    query = SearchQuery("q")
    assert state.fact_rows[0].hidden(NOW)
    assert state.fact_visibility.mask(query, NOW).tolist() == [False]
    assert state.fact_visibility.mask(query, NOW - timedelta(microseconds=1)).tolist() == [True]


def test_a_fact_is_a_row_of_one_namespace_only() -> None:
    fact = _fact(0)
    NamespaceState(4).add_fact(fact)

    with pytest.raises(ValueError, match="m000"):
        NamespaceState(4).add_fact(fact)


def test_the_arrays_grow_past_their_first_capacity() -> None:
    state = NamespaceState(4)
    for n in range(1000):
        state.add_fact(_fact(n, forgotten=n % 7 == 0))

    mask = state.fact_visibility.mask(SearchQuery("q"), NOW)
    assert len(mask) == 1000
    assert np.flatnonzero(~mask).tolist() == list(range(0, 1000, 7))
