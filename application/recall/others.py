"""Memories that state a third party's fact are not served as the subject's.

"Is the patient on any blood thinners?" The subject said "my wife's on warfarin, I always
mention that"; the QA reader answered the medications field from it, and its memory ("their
wife's on warfarin, the subject always mentions that") stayed a current memory of the
subject. The learned extractor keeps the reader's answers whatever the statement head reads
of their sentence (on the dev halves dropping them lost more right values than wrong ones),
so recall served the wife's medication as the patient's (ADR 0154).

When the policy asks for it (`RecallPolicy.withhold_third_parties`), the memory rows a turn
would serve are read by the shipped statement head (the `SentenceJudge` the extractor uses):
a row whose most probable reading is a third party's fact is not served on this turn, and the
place it leaves is filled as any empty place is.

- Read by the learned head over the packaged embedder, never by words: "their neighbour uses
  AquaLogic" and "Put it on debit order from their Capitec account" differ in what the head
  learned, not in a listed word.
- The head's most probable class, not a bar fitted on any set: its own decision.
- Memories only: a confirmed field or a pending value was decided by a reviewer or the ledger.
- Optional and fail-open: a reader that fails leaves the rows as they were.

Off by default: on the dev halves it withheld the third parties' notes it was built for, but
also right notes, since a memory's note is the subject's words rewritten in the third person
("the subject is ...", "their ..."), which the head, trained on what speakers say of
themselves, reads as someone else's more often than the first-person line (ADR 0154).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factledger.application.judgement.ports import SentenceJudge
from factledger.application.judgement.types import Statement
from factledger.application.memory.types import SearchHit
from factledger.application.recall.ports import MemoryStatements


@dataclass(frozen=True, slots=True)
class JudgedMemoryStatements:
    """`MemoryStatements` read by a `SentenceJudge`'s statement head."""

    judge: SentenceJudge

    async def third_parties(self, texts: Sequence[str]) -> list[bool]:
        judged = await self.judge.judge(list(texts))
        return [j.statement is Statement.THIRD_PARTY for j in judged]


async def own_rows(reader: MemoryStatements, rows: Sequence[SearchHit]) -> list[SearchHit]:
    """`rows` less those `reader` reads as a third party's fact, in their order; one call."""
    if not rows:
        return []
    others = await reader.third_parties([h.text for h in rows])
    return [h for h, other in zip(rows, others, strict=True) if not other]
