"""Helpers the port contract suites share: a fresh PostgreSQL schema, closing any handle."""

from __future__ import annotations

import inspect
import uuid

import psycopg
from psycopg import sql

from factledger.adapters.postgres_server import PostgresLocation


def new_schema(location: PostgresLocation, prefix: str) -> str:
    """A new, empty schema on the session's server, so each test starts from nothing."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(location.conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    return schema


async def close(handle: object) -> None:
    """Closes a store whichever way it closes (sync, async, or not at all: in-memory ones)."""
    closer = getattr(handle, "close", None)
    if closer is None:
        return
    result = closer()
    if inspect.isawaitable(result):
        await result
