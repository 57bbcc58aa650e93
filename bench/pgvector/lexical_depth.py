"""What a bounded search's answer loses when its keyword candidates come from a deeper vector
list instead of the holders statement (`PgvectorSearcher.lexical_depth`, ADR 0048), and whether
the ranking in one statement (`fused_in_sql`, ADR 0050) gives the two statements' answer: the
share of the large tier's searches whose top 3 is the one the 20-row list with its holders
statement gives (two statements)."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.application.memory.types import SearchHit, SearchQuery
from factledger.bench.pgvector.measure import RECALL_TOLERANCE, TOP_K, Workload

LEXICAL_DEPTHS = (50, 100, 200)  # the vector list depths tried against the holders statement
# The served depth (`PgvectorConfig.lexical_depth`), with the holders its bound admits (exact),
# by two statements (ADR 0048) and by one (ADR 0050).
EXACT_DEPTH = 100
TWO_STATEMENTS = f"depth {EXACT_DEPTH} + holders, two statements"
ONE_STATEMENT = f"depth {EXACT_DEPTH} + holders, one statement"


@dataclass(frozen=True, slots=True)
class DepthAgreement:
    name: str
    searches: int
    same_ids: int  # the same facts in the same order
    same_scores: int  # the same scores in order (equal sentences tie: either is right)
    second_statements: int  # searches that fetched holders
    against: str = "the holders statement's"  # whose answers these are compared with

    def text(self) -> str:
        count = max(self.searches, 1)
        return (
            f"{self.name}: top {TOP_K} as {self.against} in "
            f"{self.same_ids / count:.1%} of {self.searches} (ids), "
            f"{self.same_scores / count:.1%} (scores), holders fetched (one statement: "
            f"admitted by its bound) in "
            f"{self.second_statements}"
        )


async def depth_agreements(backend: PgvectorMemoryBackend, work: Workload) -> list[DepthAgreement]:
    """Each way's answers against the holders statement's (`lexical_depth` None, two
    statements), query by query on the same index, so only the way keyword candidates are
    found (and, for the one statement, where the ranking runs) differs."""
    # (name, lexical depth, holders past it, ranked in one statement, read from the mirror)
    ways: list[tuple[str, int | None, bool, bool, bool]] = [("holders", None, True, False, False)]
    ways += [(f"depth {d}", d, False, False, False) for d in LEXICAL_DEPTHS]
    ways += [
        (TWO_STATEMENTS, EXACT_DEPTH, True, False, False),
        (ONE_STATEMENT, EXACT_DEPTH, True, True, False),
    ]
    if backend.searcher.mirrors.held():
        ways.append(("mirror", EXACT_DEPTH, True, True, True))
    searcher = backend.searcher
    saved = (
        searcher.lexical_depth,
        searcher.holders_past_depth,
        searcher.fused_in_sql,
        searcher.mirror_reads,
    )
    answers: list[tuple[str, list[list[SearchHit]], int]] = []
    try:
        for name, depth, holders, fused, mirrored in ways:
            searcher.lexical_depth, searcher.holders_past_depth = depth, holders
            searcher.fused_in_sql, searcher.mirror_reads = fused, mirrored
            before = searcher.bounded.second_statements
            found = [
                await searcher.search(ns, SearchQuery(text, threshold=0.0, limit=TOP_K))
                for ns, text in work.queries
            ]
            answers.append((name, found, searcher.bounded.second_statements - before))
    finally:
        (
            searcher.lexical_depth,
            searcher.holders_past_depth,
            searcher.fused_in_sql,
            searcher.mirror_reads,
        ) = saved
    found_by = {name: (found, count) for name, found, count in answers}
    # Each way against the holders statement's answers; then the one statement against the
    # two at the same depth (the HNSW list and the holder limit, `HOLDER_LIMIT` nearest first,
    # can make a deeper list's answer differ from the 20-row list's in a rare search; between
    # the two forms nothing may differ); then the mirror against the one statement (each HNSW
    # graph, the database's and the mirror's, may miss a fact the other lists).
    pairs = [(name, "holders", "the holders statement's") for name in found_by]
    pairs.append((ONE_STATEMENT, TWO_STATEMENTS, f"{TWO_STATEMENTS}'"))
    if "mirror" in found_by:
        pairs.append(("mirror", ONE_STATEMENT, f"{ONE_STATEMENT}'s"))
    agreements = []
    for name, baseline, against in pairs:
        (found, count), (base, _) = found_by[name], found_by[baseline]
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
