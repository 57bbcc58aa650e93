"""Memories the statement head reads as a third party's fact are not served (`recall.others`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import structlog

from factledger.application.judgement.types import Judgement, Statement
from factledger.application.memory.types import SearchHit
from factledger.application.recall.others import JudgedMemoryStatements, own_rows
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.types import RecallResult
from tests.unit.application.recall.test_recall import SUBJECT, FixedSources
from tests.unit.application.recall.test_recall_under import FixedRows, Ledger, refs, row

ON = RecallPolicy(threshold=0.55, withhold_third_parties=True)


class ReadsOthers:
    """A reader that takes the rows whose text names one of `others` for third parties'."""

    def __init__(self, *others: str) -> None:
        self.others = others
        self.calls: list[list[str]] = []

    async def third_parties(self, texts: Sequence[str]) -> list[bool]:
        self.calls.append(list(texts))
        return [any(o in t for o in self.others) for t in texts]


class Fails:
    async def third_parties(self, texts: Sequence[str]) -> list[bool]:
        raise RuntimeError("model unavailable")


async def recall(
    rows: Sequence[SearchHit], reader: object, *, policy: RecallPolicy = ON
) -> RecallResult:
    ports = RecallPorts(
        FixedRows(rows),
        FixedSources(),
        RecallPolicies(default=policy),
        turns=Ledger(),
        statements=reader,  # type: ignore[arg-type]
    )
    return await Recall(ports).recall(SUBJECT, "is he on blood thinners")


async def test_a_memory_read_as_a_third_partys_fact_is_not_served() -> None:
    rows = [row("wife", 0.9), row("own", 0.8)]
    assert refs(await recall(rows, ReadsOthers("wife"))) == ["own"]


async def test_the_switch_off_serves_every_memory_and_reads_none() -> None:
    reader = ReadsOthers("wife")
    rows = [row("wife", 0.9), row("own", 0.8)]
    off = replace(ON, withhold_third_parties=False)
    assert refs(await recall(rows, reader, policy=off)) == ["wife", "own"]
    assert reader.calls == []


async def test_a_row_under_the_threshold_read_as_a_third_partys_does_not_fill_a_place() -> None:
    rows = [row("own", 0.8), row("neighbour", 0.5), row("debit", 0.4)]
    filled = replace(ON, under_floor=0.1)
    assert refs(await recall(rows, ReadsOthers("neighbour"), policy=filled)) == ["own", "debit"]


async def test_a_reader_that_fails_serves_the_rows_as_they_were_and_logs_no_text() -> None:
    rows = [row("wife", 0.9), row("own", 0.8)]
    with structlog.testing.capture_logs() as logs:
        result = await recall(rows, Fails())
    assert refs(result) == ["wife", "own"]
    assert "recall.others_skipped" in [e["event"] for e in logs]
    assert "said wife" not in repr(logs)


async def test_own_rows_keeps_the_order_and_asks_once() -> None:
    reader = ReadsOthers("b")
    rows = [row("a", 0.9), row("b", 0.8), row("c", 0.7)]
    assert [h.id for h in await own_rows(reader, rows)] == ["a", "c"]
    assert reader.calls == [["said a", "said b", "said c"]]


class Judge:
    """A judge whose statement head reads the given texts as third parties' facts."""

    def __init__(self, *others: str) -> None:
        self.others = others

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        def reading(text: str) -> Statement:
            return Statement.THIRD_PARTY if text in self.others else Statement.SELF

        return [Judgement(reading(s), 0.55, False, False, False) for s in sentences]


async def test_the_judges_most_probable_class_decides_however_unsure() -> None:
    statements = JudgedMemoryStatements(Judge("their wife's on warfarin"))  # type: ignore[arg-type]
    texts = ["their wife's on warfarin", "is on metformin"]
    assert await statements.third_parties(texts) == [True, False]
