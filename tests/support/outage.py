"""A database of a test's own on the session's PostgreSQL server, and cutting it off as a
restart or failover does: new connections refused, open ones terminated."""

from __future__ import annotations

import dataclasses
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


def cut_off(postgres: PostgresLocation, database: PostgresLocation) -> None:
    with psycopg.connect(postgres.conninfo, autocommit=True) as admin:
        name = sql.Identifier(database.dbname)
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(name))
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            (database.dbname,),
        )
