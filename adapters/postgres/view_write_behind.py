"""View transactions that commit on a thread while the next page is applied (a rebuild's).

A rebuild's page waited for the server four or five times (begin, lock, write, position,
commit): the server's write of a page and the round trips were a third of a rebuild's wall
time, with the rebuilding process idle. `WriteBehind` hands a finished page to a writer thread
(one connection, two round trips: lock and check the position; write, move it and commit) and
lets the caller apply the next page at once, reading on a connection of its own:

- One page at most is in flight: handing over the next waits for it, and raises its error.
- The next page reads what the page in flight wrote from memory (its last state of each
  document, deletes included), and everything else from the database, where it is committed.
- Each page still commits with its position, after checking under the tracking row's lock that
  the position is the one the page was applied from. Another follower of the same views that
  took a turn in between makes that check fail: the page is rolled back and the caller gets
  `PositionMovedError` at the next hand-over or at the end, with every committed page and
  the position consistent, as after a crash.
- `position()` is where the pages handed over end; it is durable once the block ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from factledger.adapters.postgres.tables import driver_errors_as
from factledger.adapters.postgres.view_statements import Conn, ViewStatements
from factledger.adapters.view_buffer import BufferedViewTransaction, LoadOne, LoadPrefix, Writes
from factledger.application.json_text import dumps_sorted
from factledger.application.ledger.view_store import (
    PositionMovedError,
    ViewStoreUnavailableError,
    ViewTransaction,
)

# (view, key) -> the document's text as the page in flight left it; None: deleted.
Carried = dict[tuple[str, str], str | None]


def _unavailable() -> ViewStoreUnavailableError:
    return ViewStoreUnavailableError("postgres view store failed")


@dataclass(frozen=True, slots=True)
class Page:
    writes: Writes
    start: int  # the position it was applied from
    end: int


def carried(writes: Writes) -> Carried:
    texts: Carried = {(view, key): text for view, key, text in writes.puts}
    texts.update(((view, key), None) for view, key in writes.deletes)
    return texts


def reading_through_one(load: LoadOne, carry: Carried) -> LoadOne:
    def load_one(view: str, key: str) -> str | None:
        try:
            return carry[(view, key)]
        except KeyError:
            return load(view, key)

    return load_one


def reading_through_prefix(load: LoadPrefix, carry: Carried) -> LoadPrefix:
    def load_prefix(view: str, prefix: str) -> list[tuple[str, str]]:
        rows = dict(load(view, prefix))
        for (at_view, key), text in carry.items():
            if at_view == view and key.startswith(prefix):
                if text is None:
                    rows.pop(key, None)
                else:
                    rows[key] = text
        return sorted(rows.items())

    return load_prefix


class WriteBehind:
    """One caller thread's transactions on `reader`, committed one by one on `writer`."""

    def __init__(
        self, statements: ViewStatements, *, reader: Conn, writer: Conn, position: int
    ) -> None:
        self._statements, self._reader, self._writer = statements, reader, writer
        self.position = position
        self._carry: Carried = {}
        self._in_flight: Future[None] | None = None
        self._open = False
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="factledger-write-behind")

    def transaction(self) -> AbstractContextManager[ViewTransaction]:
        return self._transaction()

    @contextmanager
    def _transaction(self) -> Iterator[ViewTransaction]:
        if self._open:
            # A savepoint's writes would commit as a page of their own, before the outer's.
            raise RuntimeError("a transaction written behind cannot be nested")
        self._open = True
        try:
            with self._page() as txn:
                yield txn
        finally:
            self._open = False

    @contextmanager
    def _page(self) -> Iterator[BufferedViewTransaction]:
        with driver_errors_as(_unavailable):
            txn = BufferedViewTransaction(
                reading_through_one(self._statements.load_one(self._reader), self._carry),
                reading_through_prefix(self._statements.load_prefix(self._reader), self._carry),
                dumps_sorted,
                self.position,
            )
            yield txn
        self._hand_over(Page(txn.take_writes(), txn.start_position, txn.new_position))

    def _hand_over(self, page: Page) -> None:
        self.wait()
        if page.end == page.start and not page.writes.puts and not page.writes.deletes:
            return
        self._carry = carried(page.writes)
        self.position = page.end
        self._in_flight = self._thread.submit(self._commit, page)

    def wait(self) -> None:
        """Until the page in flight is committed; raises its error (it is then rolled back)."""
        flight, self._in_flight = self._in_flight, None
        if flight is not None:
            flight.result()

    def close(self) -> None:
        self._thread.shutdown(wait=True)

    def _commit(self, page: Page) -> None:
        conn, statements = self._writer, self._statements
        # Two round trips: the begin goes with the lock, the commit with the writes.
        with driver_errors_as(_unavailable), conn.pipeline(), conn.transaction():
            if statements.lock_position(conn) != page.start:
                raise PositionMovedError(statements.name)
            statements.write(conn, page.writes)
            if page.end != page.start:
                # Under the row lock, at the position the page was applied from: nothing
                # else moves it before this commits, so the update's count needs no check.
                statements.store_position(conn, page.start, page.end)
