"""The served contact centre's account of each recall: `Server-Timing` split by turn."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path
from types import SimpleNamespace

import httpx
import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.application.memory.record_ids import namespace_for
from factledger.bench.pgvector.contact_centre import ContactCentreOptions, Planned
from factledger.bench.pgvector.contact_centre_served import Splits, builds_to_serve, served_ways


def test_a_subjects_first_recall_is_its_first_turn_and_the_rest_are_later_ones() -> None:
    one, two = uuid.UUID(int=1), uuid.UUID(int=2)
    splits = Splits()

    splits.add(one, 10.0, "app;dur=8.00, use;dur=5.00")
    splits.add(one, 6.0, "app;dur=4.50, use;dur=3.00")
    splits.add(two, 9.0, "app;dur=7.00, use;dur=6.00")

    assert splits.first == [True, False, True]
    assert splits.outside() == pytest.approx([3.0, 1.5, 1.0])  # in the app, outside recall
    assert splits.wire() == pytest.approx([2.0, 1.5, 2.0])  # at the client, outside the app


def test_an_answer_shed_before_recall_counts_all_its_time_outside_recall() -> None:
    splits = Splits()

    splits.add(uuid.UUID(int=1), 3.0, "app;dur=1.25")

    assert splits.outside() == pytest.approx([1.25])


async def test_a_build_served_beside_gets_its_own_ways_named_by_build() -> None:
    planned = Planned([], np.zeros((0, 4), dtype=np.float32), [uuid.UUID(int=1)], {}, [])
    options = ContactCentreOptions(served_beside=Path("other/bin/factledger"))
    async with httpx.AsyncClient() as a, httpx.AsyncClient() as b:
        ways = served_ways(None, HashingEmbedder(8), [a, b], planned, [Splits(), Splits()])  # type: ignore[arg-type]

    assert builds_to_serve(options) == [None, Path("other/bin/factledger")]
    assert [way.name for way, _ in ways] == [
        "floor (embedding + bare exact search)",
        "`/healthz` round trip, build A",
        "recall over HTTP (agent token), build A",
        "`/healthz` round trip, build B",
        "recall over HTTP (agent token), build B",
    ]


class _Cursor:
    adapters = SimpleNamespace(register_loader=lambda *_: None)

    async def execute(self, *_: object, **__: object) -> None:
        return None

    async def fetchall(self) -> list[dict[str, object]]:
        return []


class _Conn:
    """Answers the calls of a prepared search, keeping the namespace each one binds."""

    def __init__(self) -> None:
        self.bound: list[object] = []

    def cursor(self, **_: object) -> _Cursor:
        return _Cursor()

    def pipeline(self) -> AbstractAsyncContextManager[None]:
        return nullcontext()

    async def execute(self, _: object, args: list[object], **__: object) -> None:
        self.bound.append(args[0])


class _Database:
    def __init__(self) -> None:
        self.conn = _Conn()

    async def one_statement(self, run: Callable[[_Conn], Awaitable[object]]) -> object:
        return await run(self.conn)


async def test_the_floor_searches_the_namespace_that_holds_the_subjects_facts() -> None:
    served = {uuid.UUID(int=1): uuid.UUID(int=101)}
    backend = SimpleNamespace(db=_Database())
    planned = Planned([], np.zeros((0, 4), dtype=np.float32), list(served), {}, [])

    ways = served_ways(
        backend,  # type: ignore[arg-type]
        HashingEmbedder(8),
        [],
        planned,
        [],
        lambda subject: namespace_for(served[subject]),
    )
    floor = ways[0][1]
    await floor(uuid.UUID(int=1), "where do they live")

    assert backend.db.conn.bound == [namespace_for(uuid.UUID(int=101))]
