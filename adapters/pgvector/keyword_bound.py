"""The bound on a memories-mode search's keyword candidates (migration 7, ranked in
one statement by `fused_search`): the limit of the holders it fetches, and the
counts of how often its bound admitted any.

Reading every row of a large namespace for the keyword lists cost tens of milliseconds at
10,000 facts; the bound reads O(candidates): the vector list's limit-th best fused score is
the bar, its lowest cosine bounds the cosine of any fact outside it, and only the holders of
keywords whose weight could lift that cosine to the bar are fetched (through the GIN index).
The ranking is the exhaustive one over the vector list and those holders: exact wherever the
vector list is (the ANN index's own approximation stays);
`tests/integration/test_pgvector_keyword_bound.py` checks it against the exhaustive scoring.
"""

from __future__ import annotations

from dataclasses import dataclass

# Holders fetched at most: past it the nearest by vector are kept (a query whose every keyword
# is common and whose bar is low); the bench reports how often it is reached.
HOLDER_LIMIT = 500


@dataclass(slots=True)
class BoundedSearchCounts:
    """How bounded searches went in this process (the bench prints them)."""

    searches: int = 0  # bounded searches
    second_statements: int = 0  # those whose bound admitted keyword holders
    holders: int = 0  # holders fetched in all
    at_limit: int = 0  # searches that fetched `HOLDER_LIMIT` holders (maybe more existed)
