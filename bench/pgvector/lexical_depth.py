"""What a bounded search's answer loses when its vector list is deeper than the ranking's own
(`PgvectorSearchPlan.lexical_depth`, ADR 0048), and whether the mirror (ADR 0056) answers as
the database does: the share of the large tier's searches whose top 3 is the one the
ranking's own list with the holders its bound admits gives."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.searcher import PgvectorSearcher
from factledger.application.memory.ports import Embedder
from factledger.application.memory.types import SearchHit, SearchQuery
from factledger.bench.pgvector.measure import RECALL_TOLERANCE, TOP_K, Workload
from factledger.bench.pgvector.strategies import planned

LEXICAL_DEPTHS = (50, 100, 200)  # the vector list depths tried against the ranking's own
OWN_DEPTH = 1  # under the ranking's own depth: the list is the ranking's
SERVED = "served plan"


@dataclass(frozen=True, slots=True)
class DepthAgreement:
    name: str
    searches: int
    same_ids: int  # the same facts in the same order
    same_scores: int  # the same scores in order (equal sentences tie: either is right)
    second_statements: int  # searches whose bound admitted holders
    against: str = "the ranking's own list's"  # whose answers these are compared with

    def text(self) -> str:
        count = max(self.searches, 1)
        return (
            f"{self.name}: top {TOP_K} as {self.against} in "
            f"{self.same_ids / count:.1%} of {self.searches} (ids), "
            f"{self.same_scores / count:.1%} (scores), holders admitted by the bound in "
            f"{self.second_statements}"
        )


async def depth_agreements(
    backend: PgvectorMemoryBackend,
    embedder: Embedder,
    work: Workload,
    mirrored: PgvectorSearcher | None = None,
) -> list[DepthAgreement]:
    """Each depth's answers against the ranking's own list's, query by query on the same
    index, so only the depth of the vector list differs; then the mirror's against the
    served plan's (each HNSW graph, the database's and the mirror's, may miss a fact the
    other lists)."""
    ways: list[tuple[str, PgvectorSearcher]] = [
        ("own depth", planned(backend, embedder, lexical_depth=OWN_DEPTH))
    ]
    ways += [(f"depth {d}", planned(backend, embedder, lexical_depth=d)) for d in LEXICAL_DEPTHS]
    ways.append((SERVED, backend.searcher))
    if mirrored is not None and mirrored.mirrors.held():
        ways.append(("mirror", mirrored))
    answers: dict[str, tuple[list[list[SearchHit]], int]] = {}
    for name, searcher in ways:
        before = searcher.bounded.second_statements
        found = [
            await searcher.search(ns, SearchQuery(text, threshold=0.0, limit=TOP_K))
            for ns, text in work.queries
        ]
        answers[name] = (found, searcher.bounded.second_statements - before)
    pairs = [(name, "own depth", "the ranking's own list's") for name in answers]
    if "mirror" in answers:
        pairs.append(("mirror", SERVED, f"the {SERVED}'s"))
    agreements = []
    for name, baseline, against in pairs:
        (found, count), (base, _) = answers[name], answers[baseline]
        agreements.append(
            DepthAgreement(
                name,
                len(base),
                sum(_ids(a) == _ids(e) for a, e in zip(found, base, strict=True)),
                sum(_same_scores(a, e) for a, e in zip(found, base, strict=True)),
                count,
                against,
            )
        )
    return agreements


def _ids(hits: list[SearchHit]) -> list[str]:
    return [h.id for h in hits]


def _same_scores(found: list[SearchHit], exact: list[SearchHit]) -> bool:
    return len(found) == len(exact) and all(
        abs(f.score - e.score) < RECALL_TOLERANCE for f, e in zip(found, exact, strict=True)
    )
