"""Versioned migrations of the service's own stores, applied by yoyo-migrations.

- A store lists its migrations in order, each a `StoreMigration`: an id unique within the
  store and raw SQL statements (or, rarely, a function of the driver's connection, for a
  change SQL alone cannot make conditionally). A migration, once applied, is never edited: a
  change to a table is a new migration after the last.
- yoyo records each applied migration (`<store>/<id>`) in the database itself, in the table
  `factledger_migrations` of the store's schema (PostgreSQL) or file (SQLite), beside its own
  `_yoyo_log` and `_yoyo_version`; `migrate` applies only what is not recorded there, each
  migration in one transaction with its record.
- The first migration of every store is its tables as they stood before versioning, written
  with `IF NOT EXISTS`, so that a database made before versioning is adopted in place: the
  first start after the upgrade finds its tables, records the baseline, and goes on to the
  migrations after it.
- Processes that start together take a lock before applying (each technology's own: an
  advisory lock on PostgreSQL, a file lock beside a SQLite file), then look again; the
  second finds everything recorded and applies nothing. A process that finds nothing to
  apply takes no lock and runs no DDL, so a start never waits behind the store's writers.
  yoyo's own lock (a row in a table) is not used: a process killed while holding it would
  leave it behind, and every later start would wait for it and fail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

import structlog
from yoyo.backends.base import DatabaseBackend
from yoyo.migrations import Migration, MigrationList, StepCollector

log = structlog.get_logger(__name__)
MIGRATIONS_TABLE = "factledger_migrations"

Step = str | Callable[..., None]


@dataclass(frozen=True, slots=True)
class StoreMigration:
    """One version of a store's tables: its id (`0001-tables`) and its steps, in order."""

    id: str
    steps: tuple[Step, ...]


class _InMemoryMigration(Migration):  # type: ignore[misc]
    """A yoyo migration whose steps come from code rather than a file."""

    def __init__(self, store: str, migration: StoreMigration, after: Migration | None) -> None:
        migration_id = f"{store}/{migration.id}"
        super().__init__(migration_id, f"<{migration_id}>", None)
        self._steps, self._after = migration.steps, after

    def is_raw_sql(self) -> bool:
        return False

    def load(self) -> None:
        if self.loaded:
            return
        collector = StepCollector(migration=self)
        for step in self._steps:
            collector.add_step(step)
        self._depends = set() if self._after is None else {self._after}
        self.use_transactions = True
        self.steps = collector.create_steps(True)


def migration_list(store: str, migrations: Sequence[StoreMigration]) -> MigrationList:
    """`migrations` as yoyo's list, each one depending on the one before it."""
    ids = [m.id for m in migrations]
    if len(set(ids)) != len(ids):
        raise ValueError(f"store {store}: migration ids repeat")
    items: list[Migration] = []
    for migration in migrations:
        items.append(_InMemoryMigration(store, migration, items[-1] if items else None))
    return MigrationList(items)


def apply_pending(
    backend: DatabaseBackend,
    store: str,
    migrations: Sequence[StoreMigration],
    lock: Callable[[], AbstractContextManager[None]],
) -> list[str]:
    """Applies what `backend` has not recorded of `migrations` (under `lock`, looked at again
    once it is held); the ids applied."""
    wanted = migration_list(store, migrations)
    if not _pending(backend, wanted):
        return []
    with lock():
        pending = _pending(backend, wanted)
        backend.apply_migrations(pending)
    applied = [m.id.removeprefix(f"{store}/") for m in pending]
    log.info("migrations.applied", store=store, migrations=applied)
    return applied


def _pending(backend: DatabaseBackend, wanted: MigrationList) -> MigrationList:
    pending: MigrationList = backend.to_apply(wanted)
    return pending


def applied_ids(backend: DatabaseBackend, store: str) -> list[str]:
    """The ids of `store`'s migrations recorded in `backend`, in the order applied."""
    backend.ensure_internal_schema_updated()
    sql = backend.format_sql(
        "SELECT {quoted.migration_id} FROM {0.migration_table_quoted} "
        "ORDER BY {quoted.applied_at_utc}, {quoted.migration_id}"
    )
    prefix = f"{store}/"
    rows: Iterator[tuple[str]] = iter(backend.execute(sql).fetchall())
    return [row[0].removeprefix(prefix) for row in rows if row[0].startswith(prefix)]
