"""Rows under the search's threshold fill the places a turn leaves empty (`recall.under`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.types import HitKind, Namespace, SearchHit, SearchQuery
from factledger.application.recall import service
from factledger.application.recall.forget_filter import NOTHING_FORGOTTEN, ForgetMask
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.ports import TurnLedger
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.sources import OpenProposal
from factledger.application.recall.types import NoteKind, RecallResult
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor
from tests.unit.application.recall.test_recall import JAN, MAR, SUBJECT, FixedSources
from tests.unit.application.recall.test_recall_asked_field import Asks, pending

POLICY = RecallPolicy(threshold=0.55, under_floor=0.3)


def row(memory_id: str, score: float, at: datetime = JAN, *, latest: bool = True) -> SearchHit:
    return SearchHit(memory_id, f"said {memory_id}", score, HitKind.MEMORY, latest, False, at, None)


class FixedRows(InMemoryMemoryBackend):
    """A backend whose search returns fixed rows, best first, honouring the query's
    threshold and limit (as every backend's search does)."""

    def __init__(self, rows: Sequence[SearchHit]) -> None:
        super().__init__(
            extractor=ScriptedExtractor(), embedder=HashingEmbedder(), clock=ManualClock(MAR)
        )
        self.rows = sorted(rows, key=lambda h: -h.score)

    async def search(self, ns: Namespace, query: SearchQuery) -> list[SearchHit]:
        admitted = [h for h in self.rows if query.include_superseded or h.is_latest]
        return [h for h in admitted if h.score >= query.threshold][: query.limit]


class Ledger:
    def __init__(
        self, mask: ForgetMask = NOTHING_FORGOTTEN, open_changes: Sequence[OpenProposal] = ()
    ) -> None:
        self.ledger = TurnLedger((), mask, kind="lead", pending=open_changes)

    async def turn(self, subject_id: object) -> TurnLedger:
        return self.ledger


async def recall(
    rows: Sequence[SearchHit],
    *,
    policy: RecallPolicy = POLICY,
    ledger: Ledger | None = None,
    asks: Asks | None = None,
) -> RecallResult:
    ports = RecallPorts(
        FixedRows(rows),
        FixedSources(),
        RecallPolicies(default=policy),
        turns=ledger or Ledger(),
        asked_fields=asks,
    )
    return await Recall(ports).recall(SUBJECT, "how is she paying")


def refs(result: RecallResult) -> list[str]:
    return [n.origin.ref for n in result.notes]


async def test_a_turn_with_no_row_over_the_threshold_takes_the_best_rows_at_the_floor() -> None:
    result = await recall([row("debit", 0.52), row("card", 0.41), row("far", 0.12)])
    assert refs(result) == ["debit", "card"]
    assert [n.origin.kind for n in result.notes] == [NoteKind.MEMORY, NoteKind.MEMORY]
    # The note keeps its calibrated score, under the threshold: the agent can tell.
    assert result.notes[0].score == 0.52


async def test_rows_under_the_threshold_only_follow_the_rows_over_it() -> None:
    result = await recall([row("over", 0.8), row("under", 0.5), row("below_floor", 0.2)])
    assert refs(result) == ["over", "under"]


async def test_a_turn_whose_places_are_full_takes_no_row_under_the_threshold() -> None:
    full = [row("a", 0.9), row("b", 0.8), row("c", 0.7), row("under", 0.5)]
    assert refs(await recall(full)) == ["a", "b", "c"]


async def test_no_floor_serves_only_what_reaches_the_threshold() -> None:
    result = await recall([row("debit", 0.52)], policy=replace(POLICY, under_floor=None))
    assert refs(result) == []


async def test_a_forgotten_or_superseded_row_never_fills_a_place() -> None:
    rows = [row("forgotten", 0.5), row("old", 0.45, latest=False), row("kept", 0.4)]
    ledger = Ledger(mask=ForgetMask(memory_ids=frozenset({"forgotten"})))
    assert refs(await recall(rows, ledger=ledger)) == ["kept"]


async def test_an_earlier_row_the_asked_fields_newer_pending_value_outdated_stays_out() -> None:
    # The asked field's pending value was said in March; January's row does not state it.
    newer = replace(pending("payment_method", "debit order", 0), said_at=MAR)
    rows = [row("january", 0.5, JAN), row("april", 0.4, MAR + timedelta(days=30))]
    result = await recall(
        rows, ledger=Ledger(open_changes=[newer]), asks=Asks("lead", "payment_method")
    )
    assert refs(result) == [str(newer.change_id), "april"]


async def test_rows_under_the_threshold_that_cannot_be_read_leave_the_turn_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = service.unforgotten

    async def traces_fail_under_the_threshold(
        hits: Sequence[SearchHit], *args: Any, **kw: Any
    ) -> list[SearchHit]:
        if hits and all(h.score < POLICY.threshold for h in hits):
            raise RuntimeError("the backend's traces failed")
        return await real(hits, *args, **kw)

    monkeypatch.setattr(service, "unforgotten", traces_fail_under_the_threshold)
    result = await recall([row("over", 0.8), row("under", 0.5)])
    assert refs(result) == ["over"]
    assert result.degraded is None
