"""Hand-made bad inputs against one subject (`support.bad_inputs`: broken encodings, NUL and
unpaired surrogates in every text field, oversized values, awkward summaries and forgets) on
`factledger serve` over SQLite and over PostgreSQL + pgvector: nothing answers 5xx, and an
analyst then reads the subject's whole history in the largest pages (500) with 200s (that read
once answered 500 on PostgreSQL only, after about 10,000 such inputs).

`FACTLEDGER_BAD_INPUT_ROUNDS` sets how many rounds (about 35 requests each) are sent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.api_fuzz import read_every_event_page
from support.bad_inputs import pound
from support.serve_process import postgres_serve_env, serving

from factledger.adapters.postgres_server import PostgresLocation

pytestmark = [pytest.mark.slow]

ROUNDS = int(os.environ.get("FACTLEDGER_BAD_INPUT_ROUNDS", "3"))


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    extra = {"FACTLEDGER_API__RATE_LIMIT__ENABLED": "false"}
    if request.param == "postgres":
        location: PostgresLocation = request.getfixturevalue("postgres")
        extra |= postgres_serve_env(location)
    with serving(tmp_path / "serve", extra) as url:
        yield url


def test_bad_inputs_answer_below_500_and_the_history_reads_back(served: str) -> None:
    subject_id, tally = pound(served, rounds=ROUNDS)
    assert tally.failures == []
    assert tally.statuses.get(422, 0) > 0  # the bad inputs were refused as bad input
    assert read_every_event_page(served, subject_id) >= ROUNDS  # a session recorded each round
