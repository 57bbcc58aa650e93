"""The in-process contact centre's served-composed recall, split call by call."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import SearchQuery
from factledger.application.recall.forget_filter import NOTHING_FORGOTTEN
from factledger.application.recall.ports import TurnLedger
from factledger.bench.pgvector.contact_centre import Planned
from factledger.bench.pgvector.contact_centre_in_process import (
    Split,
    TimedSearch,
    TimedTurns,
    registered,
    split_table,
)
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

ONE, TWO = uuid.UUID(int=1), uuid.UUID(int=2)


def test_the_workload_is_renamed_by_ledger_id_throughout() -> None:
    planned = Planned(
        ["a", "b"], np.zeros((2, 4), dtype=np.float32), [ONE, TWO], {ONE: [0], TWO: [1]},
        [[(ONE, "q1"), (ONE, "q2")], [(TWO, "q3")]],
    )  # fmt: skip
    ids = {ONE: uuid.UUID(int=11), TWO: uuid.UUID(int=12)}

    renamed = registered(planned, ids)

    assert renamed.subjects == [ids[ONE], ids[TWO]]
    assert renamed.picked == {ids[ONE]: [0], ids[TWO]: [1]}
    assert renamed.talks == [[(ids[ONE], "q1"), (ids[ONE], "q2")], [(ids[TWO], "q3")]]


async def test_each_search_recall_awaits_is_timed_and_answered_unchanged() -> None:
    inner = InMemoryMemoryBackend(
        extractor=ScriptedExtractor(),
        embedder=HashingEmbedder(),
        clock=ManualClock(datetime(2026, 3, 1, tzinfo=UTC)),
    )
    timed = TimedSearch(inner)
    query = SearchQuery(text="supplier")

    found = await timed.search(namespace_for(ONE), query)

    assert found == await inner.search(namespace_for(ONE), query)
    assert len(timed.spans) == 1
    began, ended = timed.spans[0]
    assert ended >= began


class _Turns:
    async def turn(self, subject_id: uuid.UUID) -> TurnLedger:
        if subject_id == TWO:
            raise RuntimeError("ledger away")
        return TurnLedger(profile=(), mask=NOTHING_FORGOTTEN)


async def test_a_turn_read_notes_its_end_whether_it_answers_or_fails() -> None:
    turns = TimedTurns(_Turns())

    await turns.turn(ONE)
    with pytest.raises(RuntimeError):
        await turns.turn(TWO)

    assert len(turns.ended) == 2
    assert turns.ended[0] <= turns.ended[1]


def test_the_split_table_shows_the_recall_minus_its_search_by_turn() -> None:
    splits = [
        Split(first=True, whole=10.0, search=6.0, ledger_wait=3.0),
        Split(first=False, whole=5.0, search=4.5, ledger_wait=0.0),
    ]

    rows = {line.split(" | ")[0]: line for line in split_table(splits) if line.startswith("| ")}

    assert rows["| **the recall minus its search**"].split(" | ")[2:] == [
        "4.00 / 4.00",
        "0.50 / 0.50 |",
    ]
    assert rows["| of which waiting for the turn read"].split(" | ")[2:] == [
        "3.00 / 3.00",
        "0.00 / 0.00 |",
    ]
