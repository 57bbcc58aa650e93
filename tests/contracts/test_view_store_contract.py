"""Contract of the `ViewStore` port (`application.ledger.ports`), run over every adapter.

Adapters: in-memory, SQLite and PostgreSQL (integration; each test in its own schema). Each
test can open a second handle on the same projection, as a second follower process would (the
in-memory adapter's handles are one object). Durability across a close applies to SQLite and
PostgreSQL only: the in-memory views are rebuilt from the ledger on start.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.stores import new_schema

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.ledger.ports import PositionMovedError, ViewStore
from factledger.domain.values import JsonObject

DURABLE = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
ADAPTERS = [pytest.param("in_memory", id="in-memory"), *DURABLE]


class FailedMidwayError(Exception):
    """Raised by a test inside a transaction, as a projection's bug would be."""


@dataclass
class Views:
    """Handles on one storage; `another(name)` opens one more for projection `name`."""

    open_handle: Callable[[str], ViewStore]
    opened: list[ViewStore] = field(default_factory=list)

    def another(self, name: str = "profile") -> ViewStore:
        self.opened.append(self.open_handle(name))
        return self.opened[-1]


@pytest.fixture(params=ADAPTERS)
def views(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Views]:
    kind: str = request.param
    if kind == "in_memory":
        shared: dict[str, InMemoryViewStore] = {}
        made = Views(lambda name: shared.setdefault(name, InMemoryViewStore(name)))
    elif kind == "sqlite":
        made = Views(lambda name: SqliteViewStore(tmp_path / "views.sqlite", name))
    else:
        location: PostgresLocation = request.getfixturevalue("postgres")
        schema = new_schema(location, "views")
        made = Views(lambda name: PostgresViewStore(location.conninfo, name, schema=schema))
    yield made
    for handle in made.opened:
        handle.close()


@pytest.fixture
def store(views: Views) -> ViewStore:
    return views.another()


def doc(n: int, **extra: object) -> JsonObject:
    return {"n": n, **extra}  # type: ignore[dict-item]


def write_then_fail(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "lost", doc(2))
        txn.put("current", "kept", doc(99))
        txn.delete("current", "kept")
        txn.advance(2)
        raise FailedMidwayError


def apply_with_a_follower_nested_inside(store: ViewStore) -> None:
    """Applies position 1 while another transaction applies it first and commits."""
    with store.transaction() as outer:
        outer.put("applied", "outer", doc(0))
        outer.advance(outer.position() + 1)
        with store.transaction() as inner:
            inner.put("applied", "inner", doc(0))
            inner.advance(inner.position() + 1)


def test_a_new_store_is_empty_at_position_zero(store: ViewStore) -> None:
    assert store.position() == 0
    with store.read() as txn:
        assert txn.position() == 0
        assert txn.get("current", "k") is None
        assert txn.scan("current", "") == []


def test_documents_and_position_commit_together(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "k1", doc(1))
        txn.advance(7)
        assert txn.position() == 7
    assert store.position() == 7
    with store.read() as txn:
        assert txn.get("current", "k1") == doc(1)
        assert txn.position() == 7


def test_an_exception_rolls_back_documents_and_position(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "kept", doc(1))
        txn.advance(1)
    with pytest.raises(FailedMidwayError):
        write_then_fail(store)
    assert store.position() == 1
    with store.read() as txn:
        assert txn.get("current", "lost") is None
        assert txn.get("current", "kept") == doc(1)


def test_a_transaction_reads_its_own_writes(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "a", doc(1))
        txn.put("current", "b", doc(2))
    with store.transaction() as txn:
        txn.put("current", "c", doc(3))
        txn.put("current", "a", doc(10))
        txn.delete("current", "b")
        assert txn.get("current", "a") == doc(10)
        assert txn.get("current", "b") is None
        assert txn.scan("current", "") == [("a", doc(10)), ("c", doc(3))]
        txn.advance(1)
        assert txn.position() == 1


def put_each_then_fail(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put_each([("change", "s:c1"), ("queue", "t:q1")], doc(1))
        txn.advance(1)
        raise FailedMidwayError


def test_put_each_in_a_failed_transaction_leaves_no_address_written(store: ViewStore) -> None:
    with pytest.raises(FailedMidwayError):
        put_each_then_fail(store)
    with store.read() as txn:
        assert txn.get("change", "s:c1") is None
        assert txn.get("queue", "t:q1") is None
    assert store.position() == 0


def test_scans_between_writes_see_every_write_so_far_in_key_order(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "s:5", doc(5))
    with store.transaction() as txn:
        for key in ("s:9", "s:1", "t:0", "s:3"):  # out of order, and under another prefix
            txn.put("current", key, doc(int(key[-1])))
        assert [k for k, _ in txn.scan("current", "s:")] == ["s:1", "s:3", "s:5", "s:9"]
        txn.put("current", "s:0", doc(0))
        txn.put("queue", "s:2", doc(2))  # another view: not in this one's scan
        txn.delete("current", "s:3")
        assert [k for k, _ in txn.scan("current", "s:")] == ["s:0", "s:1", "s:5", "s:9"]
        assert [k for k, _ in txn.scan("current", "")] == ["s:0", "s:1", "s:5", "s:9", "t:0"]
        txn.put("current", "s:4", doc(4))
        assert [k for k, _ in txn.scan("current", "s:")] == ["s:0", "s:1", "s:4", "s:5", "s:9"]


# A page's worth of documents and more: a buffered transaction that sent some of them ahead
# (a rebuild lever tried and rejected, kept as a case) must still read, scan and roll back all of
# them.
MANY = 307
PART = 101


def test_a_large_transaction_reads_scans_and_commits_all_its_writes(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "stored", doc(-1))
        txn.put("gone", "stored", doc(-2))
    with store.transaction() as txn:
        assert txn.scan("current", "k") == []  # scanned before anything is sent ahead
        for n in range(MANY):
            txn.put("current", f"k{n:04d}", doc(n))
            if n == PART:
                txn.delete("gone", "stored")
                txn.put("current", "k0000", doc(0, again=True))
        assert txn.get("current", "k0000") == doc(0, again=True)
        assert txn.get("current", "stored") == doc(-1)
        assert txn.get("gone", "stored") is None
        scanned = txn.scan("current", "k")
        assert [key for key, _ in scanned] == [f"k{n:04d}" for n in range(MANY)]
        assert scanned[0][1] == doc(0, again=True)
        txn.advance(1)
    with store.read() as txn:
        assert len(txn.scan("current", "k")) == MANY
        assert txn.get("current", "k0000") == doc(0, again=True)
        assert txn.scan("gone", "") == []
    assert store.position() == 1


def write_many_then_fail(store: ViewStore) -> None:
    with store.transaction() as txn:
        for n in range(MANY):
            txn.put("current", f"k{n:04d}", doc(n))
        txn.advance(1)
        raise FailedMidwayError


def test_a_large_transaction_that_fails_leaves_nothing(store: ViewStore) -> None:
    with pytest.raises(FailedMidwayError):
        write_many_then_fail(store)
    assert store.position() == 0
    with store.read() as txn:
        assert txn.scan("current", "") == []


def test_put_replaces_and_delete_is_idempotent(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "k", doc(1))
        txn.put("current", "k", doc(2))
    with store.transaction() as txn:
        assert txn.get("current", "k") == doc(2)
        txn.delete("current", "k")
        txn.delete("current", "k")
        txn.delete("current", "never-written")
    with store.read() as txn:
        assert txn.get("current", "k") is None


def test_put_each_writes_the_same_document_at_every_address(store: ViewStore) -> None:
    written = doc(7, nested={"a": [1, 2]})
    with store.transaction() as txn:
        txn.put("current", "other", doc(0))
        txn.put_each([("current", "k"), ("queue", "q:1"), ("current", "other")], written)
        written["n"] = 8  # changed after the put: no address sees it
        assert txn.get("queue", "q:1") == doc(7, nested={"a": [1, 2]})
        txn.advance(1)
    with store.read() as txn:
        assert txn.scan("current", "") == [
            ("k", doc(7, nested={"a": [1, 2]})),
            ("other", doc(7, nested={"a": [1, 2]})),
        ]
        assert txn.get("queue", "q:1") == doc(7, nested={"a": [1, 2]})
        first, second = txn.get("current", "k"), txn.get("queue", "q:1")
    assert first is not None
    assert second is not None
    first["n"] = 9  # one address's document is not another's
    assert second["n"] == 7


def test_scan_returns_a_prefix_in_byte_order(store: ViewStore) -> None:
    keys = ["b", "a", "B", "a/2", "a-1", "ab", "é", "Z", "a0", "~", "0001", "0010"]
    with store.transaction() as txn:
        for n, key in enumerate(keys):
            txn.put("ordered", key, doc(n))
    with store.read() as txn:
        everything = [key for key, _ in txn.scan("ordered", "")]
        under_a = [key for key, _ in txn.scan("ordered", "a")]
    assert everything == sorted(keys, key=lambda k: k.encode())
    assert under_a == ["a", "a-1", "a/2", "a0", "ab"]


def test_scan_treats_prefix_characters_literally(store: ViewStore) -> None:
    with store.transaction() as txn:
        for key in ("a%b", "axb", "a_b", "a\\b"):
            txn.put("v", key, doc(1))
    with store.read() as txn:
        assert [k for k, _ in txn.scan("v", "a%")] == ["a%b"]
        assert [k for k, _ in txn.scan("v", "a_")] == ["a_b"]
        assert [k for k, _ in txn.scan("v", "a\\")] == ["a\\b"]


def test_views_and_projections_never_share_documents(views: Views) -> None:
    profile, other = views.another("profile"), views.another("history")
    with profile.transaction() as txn:
        txn.put("current", "k", doc(1))
        txn.put("versions", "k", doc(2))
        txn.advance(5)
    with other.transaction() as txn:
        assert txn.get("current", "k") is None
        assert txn.scan("current", "") == []
        assert txn.position() == 0
        txn.put("current", "k", doc(3))
        txn.advance(2)
    with profile.read() as txn:
        assert txn.get("current", "k") == doc(1)
        assert txn.scan("versions", "") == [("k", doc(2))]
    assert (profile.position(), other.position()) == (5, 2)
    other.drop()
    assert profile.position() == 5
    with profile.read() as txn:
        assert txn.get("current", "k") == doc(1)


def test_documents_read_back_as_written_and_are_not_aliased(store: ViewStore) -> None:
    written: JsonObject = {
        "text": 'Grüße 👋 "quoted"\nnext line',
        "numbers": [0, -1, 2**53, 1.5],
        "flags": {"yes": True, "no": False, "none": None},
        "empty": {"list": [], "object": {}},
    }
    with store.transaction() as txn:
        txn.put("current", "k", written)
        written["text"] = "changed after put"
    with store.read() as txn:
        found = txn.get("current", "k")
    assert found is not None
    assert found["text"] == 'Grüße 👋 "quoted"\nnext line'
    assert found["numbers"] == [0, -1, 2**53, 1.5]
    assert found["flags"] == {"yes": True, "no": False, "none": None}
    found["text"] = "changed after get"
    with store.read() as txn:
        again = txn.get("current", "k")
    assert again is not None
    assert again["text"] == 'Grüße 👋 "quoted"\nnext line'


def test_drop_deletes_every_document_and_the_position(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "k", doc(1))
        txn.put("versions", "k", doc(2))
        txn.advance(9)
    store.drop()
    assert store.position() == 0
    with store.transaction() as txn:
        assert txn.scan("current", "") == []
        assert txn.scan("versions", "") == []
        assert txn.position() == 0
        txn.advance(1)  # a rebuild starts from zero
    assert store.position() == 1


def test_writes_through_a_read_never_persist(store: ViewStore) -> None:
    with store.transaction() as txn:
        txn.put("current", "k", doc(1))
        txn.advance(1)
    with store.read() as txn:
        txn.put("current", "k", doc(2))
        txn.put("current", "new", doc(3))
        txn.advance(2)
    assert store.position() == 1
    with store.read() as txn:
        assert txn.get("current", "k") == doc(1)
        assert txn.get("current", "new") is None


def test_a_second_handle_sees_committed_work(views: Views) -> None:
    a, b = views.another(), views.another()
    with a.transaction() as txn:
        txn.put("current", "k", doc(1))
        txn.advance(3)
    assert b.position() == 3
    with b.transaction() as txn:
        assert txn.position() == 3
        assert txn.get("current", "k") == doc(1)
        txn.put("current", "k", doc(2))
        txn.advance(4)
    with a.read() as txn:
        assert txn.get("current", "k") == doc(2)
        assert txn.position() == 4


def test_concurrent_followers_never_apply_a_position_twice(views: Views) -> None:
    handles = [views.another(), views.another()]
    start = threading.Barrier(2)
    per_follower = 15

    def follow(store: ViewStore) -> None:
        start.wait()
        for _ in range(per_follower):
            with store.transaction() as txn:
                at = txn.position()
                assert txn.get("applied", f"{at:06d}") is None
                txn.put("applied", f"{at:06d}", doc(at))
                txn.advance(at + 1)

    threads = [threading.Thread(target=follow, args=(h,)) for h in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert handles[0].position() == 2 * per_follower
    with handles[1].read() as txn:
        applied = txn.scan("applied", "")
    assert [key for key, _ in applied] == [f"{n:06d}" for n in range(2 * per_follower)]


def test_a_position_moved_under_an_open_transaction_is_refused(store: ViewStore) -> None:
    with pytest.raises(PositionMovedError):
        apply_with_a_follower_nested_inside(store)
    with store.read() as txn:
        assert txn.get("applied", "outer") is None
    assert store.position() <= 1


@pytest.mark.parametrize("views", DURABLE, indirect=True)
def test_documents_and_position_survive_closing_the_store(views: Views) -> None:
    first = views.another()
    with first.transaction() as txn:
        txn.put("current", "k", doc(1))
        txn.advance(4)
    first.close()
    reopened = views.another()
    assert reopened.position() == 4
    with reopened.read() as txn:
        assert txn.get("current", "k") == doc(1)


def test_many_documents_are_read_at_once_with_the_transactions_own_writes(
    store: ViewStore,
) -> None:
    with store.transaction() as txn:
        for n in range(1, 4):
            txn.put("profile", f"s{n}", doc(n))
        txn.put("other", "s4", doc(4))  # another view: not read
        txn.advance(1)
    with store.read() as txn:
        assert txn.get_many("profile", ["s3", "s1", "s4", "missing"]) == {
            "s3": doc(3),
            "s1": doc(1),
        }
        assert txn.get_many("profile", []) == {}
    with store.transaction() as txn:
        txn.put("profile", "s2", doc(20))
        txn.delete("profile", "s1")
        assert txn.get_many("profile", ["s1", "s2", "s3"]) == {"s2": doc(20), "s3": doc(3)}
        txn.advance(2)
