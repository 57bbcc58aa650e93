"""`GroupCommit` (ADR 0027) without a database: queued units share a batch, units of one
aggregate never do, each caller gets its own unit's outcome, and a failed batch fails each
of its callers with an error of their own."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest
from support.polling import until

from factledger.adapters.postgres.group_commit import GroupCommit

WAIT_S = 10.0  # a bound for a hang only


class Store:
    """Records each batch; `gate` holds the first batch (`first`) until the others have
    queued."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.first: list[str] | None = None
        self.gate = threading.Event()

    def run(self, works: Sequence[str]) -> list[object]:
        if not self.batches:
            self.first = list(works)
            self.gate.wait(timeout=WAIT_S)
        self.batches.append(list(works))
        return [ValueError(w) if w.startswith("bad") else w.upper() for w in works]


def queued(group: GroupCommit[str]) -> int:
    return len(group._queue)


def test_queued_units_share_a_batch_and_one_aggregate_never_twice() -> None:
    store = Store()
    group: GroupCommit[str] = GroupCommit(store.run, name="test-group")
    jobs = [("a", "first")] + [(k, f"{k}-{n}") for n in range(3) for k in "bcd"]
    # The first batch waits at the gate until every other unit queued up behind it: a count,
    # not a pause, so that slow threads on a loaded machine change nothing.

    def open_the_gate_once_all_queued() -> None:
        until(
            lambda: store.first is not None and queued(group) == len(jobs) - len(store.first),
            WAIT_S,
            "the other units queued",
            every_s=0.005,
        )
        store.gate.set()

    threading.Thread(target=open_the_gate_once_all_queued, daemon=True).start()
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = [pool.submit(group.submit, frozenset({k}), w) for k, w in jobs]
        results = [f.result(timeout=WAIT_S) for f in futures]
    group.close()
    assert results == [w.upper() for _, w in jobs]
    assert len(store.batches) < len(jobs)  # some units shared a transaction
    for batch in store.batches:
        keys = [w.split("-")[0] if "-" in w else "a" for w in batch]
        assert len(keys) == len(set(keys))


def test_a_unit_that_fails_alone_raises_only_for_its_caller() -> None:
    store = Store()
    store.gate.set()
    group: GroupCommit[str] = GroupCommit(store.run, name="test-group")
    assert group.submit(frozenset({"a"}), "ok") == "OK"
    with pytest.raises(ValueError, match="bad"):
        group.submit(frozenset({"b"}), "bad")
    group.close()


def test_a_failed_batch_fails_every_caller_with_a_copy_of_its_error() -> None:
    def broken(works: Sequence[str]) -> list[object]:
        raise ConnectionError("the database went away")

    group: GroupCommit[str] = GroupCommit(broken, name="test-group")
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(group.submit, frozenset({n}), "w") for n in range(4)]
        errors = [f.exception(timeout=WAIT_S) for f in futures]
    group.close()
    assert all(isinstance(e, ConnectionError) for e in errors)
    assert len({id(e) for e in errors}) == len(errors)
    assert all(isinstance(e.__cause__, ConnectionError) for e in errors if e is not None)


def test_units_queued_while_a_batch_failed_fail_with_it_without_a_transaction() -> None:
    # The database is away: each attempt takes the pool's whole wait before it fails. A unit
    # that queued meanwhile must not wait for a second attempt to learn the same.
    attempts: list[list[str]] = []
    first_started = threading.Event()
    all_queued = threading.Event()

    def away(works: Sequence[str]) -> list[object]:
        attempts.append(list(works))
        first_started.set()
        all_queued.wait(timeout=WAIT_S)  # the pool's wait, over once the others queued
        raise ConnectionError("the database went away")

    group: GroupCommit[str] = GroupCommit(away, name="test-group")
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(group.submit, frozenset({"a"}), "first")
        assert first_started.wait(timeout=WAIT_S)
        later = [pool.submit(group.submit, frozenset({k}), k) for k in "abc"]
        until(lambda: queued(group) == len(later), WAIT_S, "the later units queued", every_s=0.005)
        all_queued.set()
        errors = [f.exception(timeout=WAIT_S) for f in [first, *later]]
    group.close()
    assert all(isinstance(e, ConnectionError) for e in errors)
    assert attempts == [["first"]]


def test_a_closed_group_refuses_new_units() -> None:
    group: GroupCommit[str] = GroupCommit(lambda works: list(works), name="test-group")
    group.close()
    with pytest.raises(RuntimeError, match="closed"):
        group.submit(frozenset({"a"}), "w")
