"""`KeyStore` in PostgreSQL (`ledger_keys` in the ledger's schema).

A deleted row stays in the table's dead tuples until VACUUM and in WAL and backups until
they age out; ADR 0003 states this limit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from psycopg import sql

from factledger.adapters.migrations import StoreMigration
from factledger.adapters.postgres.migrations import migrate
from factledger.adapters.postgres.tables import driver_errors_as
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions, healing_pool
from factledger.application.ledger.cipher import new_key
from factledger.application.ledger.ports import KeyStoreUnavailableError

# Versioned (`adapters.migrations`): a change is a new migration, never an edit of one.
MIGRATIONS = (
    StoreMigration(
        "0001-tables",
        (
            """CREATE TABLE IF NOT EXISTS {schema}.ledger_keys (
            key_id text PRIMARY KEY, scope text NOT NULL, key bytea NOT NULL,
            live boolean NOT NULL)""",
            "CREATE UNIQUE INDEX IF NOT EXISTS ledger_keys_live"
            " ON {schema}.ledger_keys (scope) WHERE live",
        ),
    ),
)


def _unavailable() -> KeyStoreUnavailableError:
    return KeyStoreUnavailableError("postgres key store failed")


class PostgresKeyStore:
    """Keys of one ledger, beside its events; a pool serves the ledger's threads (`postgres_pool`:
    a connection the server dropped is replaced, every wait bounded)."""

    def __init__(
        self, conninfo: str, *, schema: str = "public", pool: PoolOptions = DEFAULT_POOL
    ) -> None:
        self._table = sql.Identifier(schema, "ledger_keys")
        self._pool = healing_pool(conninfo, pool, name=f"factledger.keys.{schema}")
        with driver_errors_as(_unavailable):
            migrate(conninfo, schema, "keys", MIGRATIONS, pool=pool)
            self._pool.open()

    def current(self, scope: str) -> tuple[str, bytes]:
        return self.current_many([scope])[scope]

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        wanted = list(dict.fromkeys(scopes))
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            # Read first: every save after a scope's first finds its key in one round trip.
            found = self._read_live(conn, wanted)
            missing = [scope for scope in wanted if scope not in found]
            if missing:
                # Concurrent first uses race on the partial unique index; the loser reads
                # the winner.
                with conn.cursor() as cursor:
                    cursor.executemany(
                        sql.SQL(
                            "INSERT INTO {} VALUES (%s, %s, %s, true) ON CONFLICT DO NOTHING"
                        ).format(self._table),
                        [(key_id, scope, key) for scope in missing for key_id, key in [new_key()]],
                    )
                found |= self._read_live(conn, missing)
        if len(found) != len(wanted):
            raise RuntimeError("key store: no live key after insert")
        return found

    def _read_live(self, conn: Any, scopes: list[str]) -> dict[str, tuple[str, bytes]]:
        rows = conn.execute(
            sql.SQL("SELECT scope, key_id, key FROM {} WHERE live AND scope = ANY(%s)").format(
                self._table
            ),
            (scopes,),
        ).fetchall()
        return {str(scope): (str(key_id), bytes(key)) for scope, key_id, key in rows}

    def live(self, scope: str) -> tuple[str, bytes] | None:
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            return self._read_live(conn, [scope]).get(scope)

    def key(self, key_id: str) -> bytes | None:
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            row = conn.execute(
                sql.SQL("SELECT key FROM {} WHERE key_id=%s").format(self._table), (key_id,)
            ).fetchone()
        return None if row is None else bytes(row[0])

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        if not key_ids:
            return {}
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            rows = conn.execute(
                sql.SQL("SELECT key_id, key FROM {} WHERE key_id = ANY(%s)").format(self._table),
                (list(key_ids),),
            ).fetchall()
        return {str(key_id): bytes(key) for key_id, key in rows}

    def forget(self, scope: str) -> int:
        return self.forget_many([scope])

    def forget_many(self, scopes: Collection[str]) -> int:
        if not scopes:
            return 0
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            cursor = conn.execute(
                sql.SQL("DELETE FROM {} WHERE scope = ANY(%s)").format(self._table),
                (list(scopes),),
            )
            return cursor.rowcount

    def forget_prefix(self, prefix: str) -> int:
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            cursor = conn.execute(
                sql.SQL("DELETE FROM {} WHERE starts_with(scope, %s)").format(self._table),
                (prefix,),
            )
            return cursor.rowcount

    def retire(self, scope: str, retired_scope: str) -> str | None:
        with driver_errors_as(_unavailable), self._pool.connection() as conn:
            row = conn.execute(
                sql.SQL(
                    "UPDATE {} SET scope=%s, live=false WHERE scope=%s AND live RETURNING key_id"
                ).format(self._table),
                (retired_scope, scope),
            ).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        self._pool.close()
