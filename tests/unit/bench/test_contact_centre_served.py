"""The served contact centre's account of each recall: `Server-Timing` split by turn."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
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
