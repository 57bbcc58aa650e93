"""The shape every store choice shares: in process memory, a SQLite file, or a PostgreSQL schema.

A store's settings subclass these, adding only its docstring and its own default schema, so
each store reads `KIND`, `PATH` and `SCHEMA_NAME` the same way (`FACTLEDGER_VIEWS__PATH`,
`FACTLEDGER_EVENT_STORE__SCHEMA_NAME`, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from factledger.api.settings.base import NestedSettings, SqlName


class InProcessStoreSettings(NestedSettings):
    """A store in process memory: gone when the process exits."""

    kind: Literal["memory"] = "memory"


class SqliteFileStoreSettings(NestedSettings):
    """A store in a SQLite file; `path` unset means the store's default under the data dir."""

    kind: Literal["sqlite"] = "sqlite"
    path: Path | None = None


class PostgresSchemaStoreSettings(NestedSettings):
    """A store in one schema of the PostgreSQL database (`DATABASE_URL`, else the embedded
    server); each store names its own default schema."""

    kind: Literal["postgres"] = "postgres"
    schema_name: SqlName
