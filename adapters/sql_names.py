"""Names of PostgreSQL schemas and roles, as the settings and the PostgreSQL adapters accept them.

Statements quote every name (`psycopg.sql.Identifier`); the rule keeps names to unquoted
lower-case identifiers within PostgreSQL's 63-byte limit, so they read the same in `psql`.
"""

from __future__ import annotations

import re

SQL_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def sql_name(value: str, *, what: str = "schema") -> str:
    """Returns `value` if it is a valid schema or role name, else raises `ValueError`."""
    if not isinstance(value, str) or not SQL_NAME.fullmatch(value):
        raise ValueError(f"{what}: must match {SQL_NAME.pattern}")
    return value
