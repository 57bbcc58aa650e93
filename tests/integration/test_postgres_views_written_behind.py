"""PostgreSQL views written behind (a rebuild's pages commit on a writer thread while the next
is applied): what the next page reads, what the position says, and a follower of the same
views that takes a turn in between."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.store_kinds import make_view_store, twin_view_stores

from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.view_store import PositionMovedError, ViewStore
from factledger.domain.values import JsonObject

pytestmark = pytest.mark.integration


def doc(n: int) -> JsonObject:
    return {"n": n}


@pytest.fixture
def store(postgres: PostgresLocation, tmp_path: Path) -> Iterator[PostgresViewStore]:
    made = make_view_store("postgres", tmp_path, postgres)
    assert isinstance(made, PostgresViewStore)
    yield made
    made.close()


@pytest.fixture
def twins(postgres: PostgresLocation, tmp_path: Path) -> Iterator[list[ViewStore]]:
    with twin_view_stores("postgres", tmp_path, postgres) as stores:
        yield stores


def test_a_page_reads_what_the_page_before_it_wrote_whether_committed_or_not(
    store: PostgresViewStore,
) -> None:
    with store.transaction() as txn:
        txn.put("change", "s1:gone", doc(0))
        txn.put("change", "s1:kept", doc(1))
        txn.advance(1)
    with store.writing_behind():
        for n in range(2, 40):
            with store.transaction() as txn:
                assert txn.position() == n - 1
                assert txn.get("change", f"s1:{n - 1:03d}") == (doc(n - 1) if n > 2 else None)
                assert (txn.get("change", "s1:gone") is None) == (n > 2)
                assert [key for key, _ in txn.scan("change", "s1:")] == [
                    *(f"s1:{m:03d}" for m in range(2, n)),
                    *(["s1:gone"] if n == 2 else []),
                    "s1:kept",
                ]
                txn.delete("change", "s1:gone")
                txn.put("change", f"s1:{n:03d}", doc(n))
                txn.advance(n)
            assert store.position() == n
    assert store.position() == 39
    with store.read() as txn:
        keys = [key for key, _ in txn.scan("change", "s1:")]
    assert keys == [f"s1:{n:03d}" for n in range(2, 40)] + ["s1:kept"]


def wait_until_committed(store: ViewStore, position: int) -> None:
    deadline = time.monotonic() + 10
    while store.position() != position:
        assert time.monotonic() < deadline, "the page in flight was never committed"
        time.sleep(0.01)


def test_another_followers_turn_in_between_refuses_the_page_and_keeps_the_views_consistent(
    twins: list[PostgresViewStore],
) -> None:
    behind, other = twins

    def pages_around_a_turn_of_the_other() -> None:
        with behind.writing_behind():
            with behind.transaction() as txn:
                txn.put("applied", "1", doc(1))
                txn.advance(1)
            # The other handle takes its turn once the page in flight is committed.
            wait_until_committed(other, 1)
            with other.transaction() as txn:
                assert txn.position() == 1
                txn.put("applied", "2", doc(2))
                txn.advance(2)
            with behind.transaction() as txn:
                assert txn.position() == 1  # applied from where its own pages end
                txn.put("applied", "2", doc(-2))
                txn.advance(2)

    with pytest.raises(PositionMovedError):
        pages_around_a_turn_of_the_other()
    assert behind.position() == other.position() == 2
    with behind.read() as txn:
        assert txn.scan("applied", "") == [("1", doc(1)), ("2", doc(2))]


def test_a_failed_page_ends_the_block_with_everything_before_it_committed(
    store: PostgresViewStore,
) -> None:
    def a_page_then_a_failing_one() -> None:
        with store.writing_behind():
            with store.transaction() as txn:
                txn.put("applied", "1", doc(1))
                txn.advance(1)
            with store.transaction() as txn:
                txn.put("applied", "2", doc(2))
                txn.advance(2)
                _ = 1 / 0

    with pytest.raises(ZeroDivisionError):
        a_page_then_a_failing_one()
    assert store.position() == 1
    with store.read() as txn:
        assert txn.scan("applied", "") == [("1", doc(1))]
    with store.transaction() as txn:  # the handle works on, committing in turn
        txn.advance(3)
    assert store.position() == 3


def test_a_transaction_written_behind_cannot_be_nested(store: PostgresViewStore) -> None:
    def nested() -> None:
        with store.writing_behind(), store.transaction(), store.transaction():
            pass

    with pytest.raises(RuntimeError, match="nested"):
        nested()
    assert store.position() == 0
