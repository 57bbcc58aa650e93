"""A database of a test's own on the session's PostgreSQL server, and cutting it off as a
restart or failover does: new connections refused, open ones terminated."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql

from factledger.adapters.postgres_server import PostgresLocation


@contextmanager
def own_database(postgres: PostgresLocation, prefix: str) -> Iterator[PostgresLocation]:
    """A new, empty database (dropped afterwards, whatever still holds it)."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield dataclasses.replace(postgres, dbname=name)
    finally:
        with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


# A connection a pool began before the database was closed to new ones may still be starting,
# not yet listed under the database in pg_stat_activity: the cut is done only once the list has
# stayed empty across a few rounds this far apart.
SETTLE_S = 0.05
EMPTY_ROUNDS = 3
CUT_OFF_WITHIN_S = 10.0


def cut_off(postgres: PostgresLocation, database: PostgresLocation) -> None:
    """New connections refused, and every open one terminated, those still starting included."""
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        name = sql.Identifier(database.dbname)
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(name))
        deadline = time.monotonic() + CUT_OFF_WITHIN_S
        empty = 0
        while empty < EMPTY_ROUNDS:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{database.dbname}: connections still open after the cut")
            row = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (database.dbname,),
            ).fetchone()
            empty = empty + 1 if row is not None and row[0] == 0 else 0
            time.sleep(SETTLE_S)
