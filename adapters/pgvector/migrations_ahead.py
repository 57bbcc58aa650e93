"""The pgvector backend's migrations, started before the backend opens.

A PostgreSQL start opens the ledger (its stores migrating side by side, ADR 0095) and then
the memory backend, whose migrations (13 versions in one transaction on a new database) ran
only then, on the start's path. They need only the owner's connection string and the
embedder's dimension, both known before the ledger opens, so the composition root starts
them on a thread of their own meanwhile (`start`); the ledger's opening holds the event
loop, so the thread runs them on a loop of its own. `PgvectorMemoryBackend.open` takes
their result (`applied`) when it was started for the same database and options; otherwise,
or if they failed, it migrates as before and raises its own error.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from dataclasses import dataclass

from factledger.adapters.pgvector.schema import SchemaOptions, apply_migrations


@dataclass(frozen=True, slots=True)
class MigrationsAhead:
    """Migrations started for `conninfo` with `options`, and their result to come."""

    conninfo: str
    options: SchemaOptions
    result: Future[list[int]]

    async def applied(self, conninfo: str, options: SchemaOptions) -> list[int] | None:
        """The versions these migrations applied, once they are done; None when they were
        started for another database or other options, or failed (the caller migrates)."""
        if (conninfo, options) != (self.conninfo, self.options):
            return None
        try:
            return await asyncio.wrap_future(self.result)
        except Exception:  # the caller's own migration reports it
            return None


def start(conninfo: str, options: SchemaOptions) -> MigrationsAhead:
    """Starts the migrations on a thread and returns at once."""
    result: Future[list[int]] = Future()

    def run() -> None:
        try:
            result.set_result(asyncio.run(apply_migrations(conninfo, options)))
        except Exception as exc:  # handed to the backend's opening
            result.set_exception(exc)

    threading.Thread(target=run, name="factledger-migrate-pgvector", daemon=True).start()
    return MigrationsAhead(conninfo, options, result)
