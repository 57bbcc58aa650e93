"""How the pgvector backend searches: one frozen plan, built by the composition root from the
settings and read by `searcher.PgvectorSearcher`; a benchmark compares another plan by
building a searcher of its own with it, never by changing a running one."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.search import HNSW_EF_SEARCH

MAX_LEXICAL_DEPTH = 10_000
MAX_EF_SEARCH = 1_000  # pgvector's own upper limit of `hnsw.ef_search`


@dataclass(frozen=True, slots=True)
class PgvectorSearchPlan:
    """- `lexical_depth`: how deep a memories-mode search with keywords reads the vector list
      of a namespace with an ANN index. Deeper than the rows the ranking needs
      (four times the limit, at least 20), the list's lowest cosine bounds the facts outside
      it lower, so fewer keyword holders can still reach the top and the statement fetches
      them less often; the answer stays exact. A depth under the ranking's own changes nothing.
    - `ef_search`: the HNSW candidate list of a search that reads a namespace's ANN index.
    - `mirror`: how much of the namespaces this process keeps in memory for its searches
     ; `MirrorSettings(budget_mb=0)` reads the database on every search.
    """

    lexical_depth: int = 100
    ef_search: int = HNSW_EF_SEARCH
    mirror: MirrorSettings = MirrorSettings()  # noqa: RUF009 (frozen)

    def __post_init__(self) -> None:
        if not 1 <= self.lexical_depth <= MAX_LEXICAL_DEPTH:
            raise ValueError(f"lexical_depth: between 1 and {MAX_LEXICAL_DEPTH}")
        if not 1 <= self.ef_search <= MAX_EF_SEARCH:
            raise ValueError(f"ef_search: between 1 and {MAX_EF_SEARCH}")
