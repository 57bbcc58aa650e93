"""Connection settings of the pgvector backend, and their derivation for the embedded server."""

from __future__ import annotations

from dataclasses import dataclass, replace

import psycopg
from psycopg import sql

from factledger.adapters.pgvector.search_plan import PgvectorSearchPlan
from factledger.adapters.postgres_pool import DEFAULT_POOL, PoolOptions
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sql_names import sql_name

DEFAULT_SCHEMA = "factledger_memory"
DEFAULT_APP_ROLE = "factledger_app"


@dataclass(frozen=True, slots=True)
class PgvectorConfig:
    """Where and how to connect.

    - `admin_conninfo` (the role that owns the tables) runs migrations and index maintenance.
    - `app_conninfo` (a role that neither owns the tables nor bypasses RLS) serves every call;
      the backend refuses to start otherwise.
    - `create_app_role` lets the migration create `app_role` (embedded server); on your own
      server create the login role yourself and the migration grants it what it needs.
    - `search`: how it searches (`search_plan.PgvectorSearchPlan`).
    - `read_conninfo`: the application role on a hot standby of the same server, for the
      searches a request may route there (`adapters.read_routing`); its tables are the
      primary's, replayed, so a search there is exact as of the standby's replay position.
    """

    app_conninfo: str
    admin_conninfo: str
    schema: str = DEFAULT_SCHEMA
    app_role: str = DEFAULT_APP_ROLE
    create_app_role: bool = False
    pool_min: int = 1
    pool_max: int = 4
    start_worker: bool = True
    # Connect, statement, wait and reconnect timeouts of the application pool (not its sizes).
    timeouts: PoolOptions = DEFAULT_POOL
    search: PgvectorSearchPlan = PgvectorSearchPlan()  # noqa: RUF009 (frozen)
    read_conninfo: str | None = None

    def __post_init__(self) -> None:
        sql_name(self.schema)
        sql_name(self.app_role, what="app_role")


def embedded_config(
    location: PostgresLocation,
    *,
    dbname: str | None = None,
    schema: str = DEFAULT_SCHEMA,
    app_role: str = DEFAULT_APP_ROLE,
    pool_max: int = 4,
    standby: PostgresLocation | None = None,
) -> PgvectorConfig:
    """The embedded server trusts local socket logins, so the app role needs no password (nor
    on its `standby`, whose roles are the primary's)."""
    admin = replace(location, dbname=dbname or location.dbname)
    app = replace(admin, user=app_role, password="")
    reader = None
    if standby is not None:
        reader = replace(standby, dbname=dbname or standby.dbname, user=app_role, password="")
    return PgvectorConfig(
        read_conninfo=None if reader is None else reader.conninfo,
        app_conninfo=app.conninfo,
        admin_conninfo=admin.conninfo,
        schema=schema,
        app_role=app_role,
        create_app_role=True,
        pool_max=pool_max,
    )


def server_config(
    *,
    dsn: str | None,
    admin_dsn: str | None,
    server: PostgresLocation | None,
    schema: str = DEFAULT_SCHEMA,
    app_role: str = DEFAULT_APP_ROLE,
    pool_max: int = 4,
    read_dsn: str | None = None,
    standby: PostgresLocation | None = None,
) -> PgvectorConfig:
    """The config for `PgvectorBackendSettings`: explicit DSNs for your own server, else the
    given server (from `database_url`, or the embedded one) with a role the migration creates;
    a standby's reads through `read_dsn` or, derived the same way, `standby`."""
    if dsn is not None and admin_dsn is not None:
        return PgvectorConfig(
            app_conninfo=dsn,
            admin_conninfo=admin_dsn,
            schema=schema,
            app_role=app_role,
            pool_max=pool_max,
            read_conninfo=read_dsn,
        )
    if server is None:
        raise ValueError("pgvector: no DSNs and no server to derive them from")
    return embedded_config(
        server, schema=schema, app_role=app_role, pool_max=pool_max, standby=standby
    )


async def ensure_database(location: PostgresLocation, dbname: str) -> None:
    """Creates `dbname` on the server unless it exists (tests and benchmarks isolate by it)."""
    async with await psycopg.AsyncConnection.connect(location.conninfo, autocommit=True) as conn:
        cur = await conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [dbname])
        if await cur.fetchone() is not None:
            return
        try:
            await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
        except psycopg.errors.DuplicateDatabase:
            return  # another process created it meanwhile
